/**
 * The one error the Iceberg reader throws for a table it can't read: not a bug of the caller but a
 * missing, malformed or unsupported table. The message names the file and what to do next.
 */
export type IcebergErrorCode = "not_a_table" | "corrupt" | "unsupported" | "missing_snapshot";

export class IcebergError extends Error {
  override readonly name = "IcebergError";
  constructor(
    readonly code: IcebergErrorCode,
    message: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
}
