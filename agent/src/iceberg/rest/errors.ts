/**
 * The one error the REST catalog client throws. Its message names the spec operation
 * (`loadTable`), the method and the URL, and what to do next where there is something to do;
 * it never holds the bearer token or the client secret, not even in a message the server wrote.
 *
 * - `http`: the catalog answered with an error status (`status`, and the `ErrorModel`'s `type`).
 * - `timeout`, `network`: no answer; for a commit that means "state unknown", which
 *   `commitTable` returns as an outcome instead of throwing.
 * - `malformed`: the catalog answered 2xx with a body the spec does not allow.
 * - `invalid_name`: a namespace or table name that can't be put in a URL path; nothing was sent.
 */
export type RestCatalogErrorReason = "http" | "timeout" | "network" | "malformed" | "invalid_name";

export class RestCatalogError extends Error {
  override readonly name = "RestCatalogError";
  /** The HTTP status the catalog answered, where it answered. */
  readonly status: number | undefined;
  /** The catalog's error type (`NoSuchTableException`, `invalid_client`), where it sent one. */
  readonly type: string | undefined;
  constructor(
    readonly reason: RestCatalogErrorReason,
    /** The spec's operationId: `getConfig`, `getToken`, `listNamespaces`, `loadTable`, `updateTable`... */
    readonly operation: string,
    message: string,
    options: { status?: number; type?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status;
    this.type = options.type;
  }
}
