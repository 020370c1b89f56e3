import { type DeleteResult, StoreError } from "./types.ts";

/**
 * Refuses keys whose meaning would depend on the backend: S3 keeps `a/../b` literally while a file
 * system resolves it (and could leave the root), so both stores accept only plain relative keys.
 */
export function checkKey(key: string): string {
  if (key === "") throw new StoreError("invalid_key", "an object key can't be empty");
  checkPrefix(key);
  if (key.endsWith("/")) throw new StoreError("invalid_key", `object key '${key}' ends with '/'`);
  return key;
}

/** A list prefix follows the key rules, except that it may be empty or end with `/`. */
export function checkPrefix(prefix: string): string {
  if (prefix.startsWith("/"))
    throw new StoreError("invalid_key", `key '${prefix}' must be relative to the root`);
  if (prefix.includes("\0") || prefix.includes("\\"))
    throw new StoreError("invalid_key", `key '${prefix}' contains a NUL or a backslash`);
  const segments = prefix.split("/");
  if (prefix.endsWith("/")) segments.pop();
  if (prefix !== "" && segments.some((s) => s === "" || s === "." || s === ".."))
    throw new StoreError("invalid_key", `key '${prefix}' has an empty, '.' or '..' segment`);
  return prefix;
}

/** The keys of a batch delete that pass `checkKey`, and a result that already reports the others. */
export function splitKeys(keys: readonly string[]): { valid: string[]; result: DeleteResult } {
  const result: DeleteResult = { deleted: [], errors: [] };
  const valid: string[] = [];
  for (const key of keys) {
    try {
      valid.push(checkKey(key));
    } catch (err) {
      result.errors.push({ key, code: "invalid_key", message: (err as Error).message });
    }
  }
  return { valid, result };
}

/** Reports each of `keys` as failed with `failure` (a `StoreError`'s or the service's code, else its name). */
export function reportFailure(result: DeleteResult, keys: readonly string[], failure: Error): void {
  const service = (failure as { code?: unknown }).code;
  const code =
    failure instanceof StoreError
      ? failure.code
      : typeof service === "string"
        ? service
        : failure.name || "error";
  for (const key of keys) result.errors.push({ key, code, message: failure.message });
}
