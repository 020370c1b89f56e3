/**
 * One request to the catalog and the reading of its answer, shared by the token endpoint and the
 * catalog routes.
 *
 * - Requests go through undici's `request` on its keep-alive connection pool: a sync loads every
 *   table of a catalog, and `fetch` spends about four times the CPU on each one (its WHATWG
 *   Request, Response and Headers objects). A caller's own `fetch` (tests that alter answers) is
 *   used instead where given.
 * - Each request has its own deadline (`AbortSignal.timeout`), covering the headers and the body.
 * - An error answer becomes a `RestCatalogError` whose message is the operation, method and URL,
 *   the status, and the server's `ErrorModel` (or OAuth error, or the start of a non-JSON body),
 *   with every secret the caller names replaced by `<redacted>`.
 */
import { request } from "undici";
import { z } from "zod";
import { RestCatalogError } from "./errors.ts";

export type FetchFn = typeof fetch;

export interface Exchange {
  /** The spec's operationId, for messages. */
  operation: string;
  method: "GET" | "POST";
  url: string;
  body?: string;
  contentType?: string;
  /** The bearer token, where the route needs one. */
  token?: string | undefined;
  /** The whole `authorization` header, for routes that want other credentials (HTTP Basic). */
  authorization?: string;
}

export interface Answer {
  status: number;
  text: string;
}

export interface HttpOptions {
  /** Sends through this `fetch` instead of undici's pool. */
  fetch?: FetchFn | undefined;
  timeoutMs: number;
}

/** Sends one request; throws `timeout` or `network` when no whole answer came back in time. */
export async function send(http: HttpOptions, exchange: Exchange): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (exchange.contentType) headers["content-type"] = exchange.contentType;
  if (exchange.token !== undefined) headers.authorization = `Bearer ${exchange.token}`;
  if (exchange.authorization !== undefined) headers.authorization = exchange.authorization;
  const init = {
    method: exchange.method,
    headers,
    body: exchange.body,
    signal: AbortSignal.timeout(http.timeoutMs),
  };
  try {
    if (http.fetch) {
      const response = await http.fetch(exchange.url, init);
      return { status: response.status, text: await response.text() };
    }
    const response = await request(exchange.url, init);
    return { status: response.statusCode, text: await response.body.text() };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
    const reason = timedOut ? "timeout" : "network";
    const why = timedOut ? `no answer within ${http.timeoutMs} ms` : `no answer (${describe(err)})`;
    throw new RestCatalogError(reason, exchange.operation, `${where(exchange)}: ${why}`, { cause: err });
  }
}

/** undici says only "fetch failed"; the reason (ECONNREFUSED, a reset) is in its cause. */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
  return cause ? `${message}: ${cause}` : message;
}

const IcebergErrorBody = z.object({
  error: z.object({ message: z.string(), type: z.string(), code: z.number().int() }),
});
const OAuthErrorBody = z.object({ error: z.string(), error_description: z.string().optional() });

/** What the catalog said went wrong: the `ErrorModel`, an OAuth error, or the body's first line. */
export function errorOf(answer: Answer): { type: string | undefined; message: string } {
  let json: unknown;
  try {
    json = JSON.parse(answer.text);
  } catch {
    const line = answer.text.trim().split("\n", 1)[0] ?? "";
    return { type: undefined, message: line.length > 200 ? `${line.slice(0, 200)}...` : line || "(no body)" };
  }
  const iceberg = IcebergErrorBody.safeParse(json);
  if (iceberg.success) return { type: iceberg.data.error.type, message: iceberg.data.error.message };
  const oauth = OAuthErrorBody.safeParse(json);
  if (oauth.success) return { type: oauth.data.error, message: oauth.data.error_description ?? "" };
  return { type: undefined, message: "(an error body that is not the spec's ErrorModel)" };
}

/** A `RestCatalogError` for an error status, with `hint` (what to do next) appended. */
export function statusError(
  exchange: Exchange,
  answer: Answer,
  secrets: readonly string[],
  hint?: string,
): RestCatalogError {
  const { type, message } = errorOf(answer);
  const said = redact(type ? `${type}: ${message}` : message, secrets);
  const text = `${where(exchange)}: ${answer.status} ${said}${hint ? `; ${hint}` : ""}`;
  return new RestCatalogError("http", exchange.operation, text, { status: answer.status, type });
}

/** A `RestCatalogError` for a 2xx answer whose body is not what the spec promises. */
export function malformed(exchange: Exchange, why: string, cause?: unknown): RestCatalogError {
  return new RestCatalogError(
    "malformed",
    exchange.operation,
    `${where(exchange)}: the catalog's answer is not a valid ${why}`,
    { cause },
  );
}

/** `operation METHOD url`, the start of every message. */
export function where(exchange: Exchange): string {
  return `${exchange.operation} ${exchange.method} ${exchange.url}`;
}

/** Replaces every occurrence of each secret (token, client secret) with `<redacted>`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join("<redacted>");
  return out;
}
