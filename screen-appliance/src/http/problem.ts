/**
 * The appliance's one error shape, the same RFC 9457 `application/problem+json` body the control
 * plane answers with: `{type, title, status, detail, errors?: [{path, message}]}`. The appliance is
 * shipped alone, so it carries this small copy instead of depending on the control plane.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface FieldError {
  path: string;
  message: string;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const SLUGS: Record<number, string> = {
  400: "bad-request",
  403: "forbidden",
  404: "not-found",
  413: "payload-too-large",
  415: "unsupported-media-type",
  422: "validation-error",
  500: "internal-error",
  503: "unavailable",
};

/** An error raised on purpose; `handleError` turns it into a problem response. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

/** A 422 naming one field, e.g. `invalidField("encryptionKey", "does not decrypt these tokens")`. */
export const invalidField = (path: string, message: string) =>
  new ApiError(422, `${path}: ${message}`, [{ path, message }]);

export function problemResponse(status: number, detail: string, errors?: FieldError[]): Response {
  const body = {
    type: `https://lakesmith.dev/problems/${SLUGS[status] ?? "error"}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    ...(errors ? { errors } : {}),
  };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/problem+json" },
  });
}

/** Hono `onError`: thrown errors become problem responses; only unexpected ones are 500s, logged. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) return problemResponse(err.status, err.message, err.errors);
  if (err instanceof HTTPException) return problemResponse(err.status, err.message || "Request failed");
  console.error(`[screen] unhandled error on ${c.req.method} ${c.req.path}:`, err);
  return problemResponse(500, "The appliance failed to handle this request; the error was logged.");
}
