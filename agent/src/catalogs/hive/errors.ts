/**
 * The one error the Hive Metastore client throws. Its message names the metastore (`thrift://
 * host:port`), the call, and what went wrong in the metastore's own words where it gave any; it
 * never holds the password, not even inside a message the server wrote.
 *
 * - `metastore`: the metastore answered with one of its exceptions (`type`: `MetaException`,
 *   `NoSuchObjectException`, `InvalidOperationException`, `NoSuchLockException`, ...).
 * - `refused`: the SASL login was refused (wrong user or password).
 * - `network`, `timeout`: no answer (refused connection, closed socket, no reply in time).
 * - `locked`: `withTableLock` waited its whole time for another holder of the lock.
 * - `protocol`: the bytes were not the Thrift the client expects (a plain socket talking to a SASL
 *   metastore, or the other way around, reads this way).
 */
export type HiveErrorReason = "metastore" | "refused" | "network" | "timeout" | "locked" | "protocol";

export class HiveMetastoreError extends Error {
  override readonly name = "HiveMetastoreError";
  constructor(
    readonly reason: HiveErrorReason,
    /** The Thrift call (`get_table`, `lock`...) or `connect` / `login`. */
    readonly operation: string,
    message: string,
    /** The metastore exception's class, for `metastore`. */
    readonly type?: string,
  ) {
    super(message);
  }
}

/** Whether `err` is the metastore saying the object does not exist. */
export function isNoSuchObject(err: unknown): boolean {
  return err instanceof HiveMetastoreError && err.type === "NoSuchObjectException";
}
