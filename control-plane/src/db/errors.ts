/** Reading the database's errors, the same on libSQL and D1. */

/** Whether a database error (or one it wraps) is a unique-constraint failure on `target`. */
export function isUniqueViolation(err: unknown, target: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause)
    if (e.message.includes("UNIQUE constraint failed") && e.message.includes(target)) return true;
  return false;
}
