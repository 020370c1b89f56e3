/**
 * A concurrent commit invalidated this one: another writer removed a file the commit replaces, or
 * changed the schema, partitioning or protocol. Every format's commit throws it; the caller reloads
 * the table and re-plans (or keeps what the winner left alone) and tries again.
 */
export class ConflictError extends Error {
  override readonly name = "ConflictError";
  readonly retryable = true;
  constructor(
    message: string,
    /** The version whose commit conflicted. */
    readonly version: number,
  ) {
    super(message);
  }
}
