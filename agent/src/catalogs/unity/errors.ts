/**
 * Unity Catalog's error answers as the agent's one catalog error, `RestCatalogError` (the same
 * reasons, `http`, `timeout`, `network`, `malformed`, mean the same things here). The message is
 * the operation, method and URL, the status, and what the server said: Unity's
 * `{ error_code, message }`, an OAuth `{ error, error_description }` from the token endpoint, or the
 * first line of anything else; every secret is replaced by `<redacted>`.
 */
import { z } from "zod";
import { RestCatalogError } from "../../iceberg/rest/errors.ts";
import { type Answer, type Exchange, errorOf, redact, where } from "../../iceberg/rest/http.ts";

const UnityErrorBody = z.object({ error_code: z.string(), message: z.string() });

/** What Unity (or its token endpoint) said went wrong. */
export function unityErrorOf(answer: Answer): { type: string | undefined; message: string } {
  try {
    const unity = UnityErrorBody.safeParse(JSON.parse(answer.text));
    if (unity.success) return { type: unity.data.error_code, message: unity.data.message };
  } catch {
    // Not JSON: errorOf reports the body's first line.
  }
  return errorOf(answer);
}

/** A `RestCatalogError` for an error status, with `hint` (what to do next) appended. */
export function unityStatusError(
  exchange: Exchange,
  answer: Answer,
  secrets: readonly string[],
  hint?: string,
): RestCatalogError {
  const { type, message } = unityErrorOf(answer);
  const said = redact(type ? `${type}: ${message}` : message, secrets);
  const text = `${where(exchange)}: ${answer.status} ${said}${hint ? `; ${hint}` : ""}`;
  return new RestCatalogError("http", exchange.operation, text, { status: answer.status, type });
}
