/**
 * The one error shape: RFC 9457 `application/problem+json` with `type`, `title`, `status`, `detail`
 * and, for validation failures, `errors: [{path, message}]`.
 *
 * Handlers and services throw `ApiError`; `onError` and `notFound` turn everything into a problem
 * response. Nothing unexpected leaks a stack trace: unknown errors become a bare 500 and are logged.
 */

import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface FieldError {
  path: string;
  message: string;
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const SLUGS: Record<number, string> = {
  400: "bad-request",
  401: "unauthorized",
  403: "forbidden",
  404: "not-found",
  405: "method-not-allowed",
  409: "conflict",
  413: "payload-too-large",
  415: "unsupported-media-type",
  422: "validation-error",
  500: "internal-error",
  503: "unavailable",
};

/** An error a handler or service raises on purpose; it becomes a problem response. */
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

export const notFound = (what: string, id: string) => new ApiError(404, `${what} '${id}' does not exist.`);
export const conflict = (detail: string) => new ApiError(409, detail);
export const forbidden = (detail: string) => new ApiError(403, detail);
export const unauthorized = (detail: string) => new ApiError(401, detail);
/** A 422 naming one field. */
export const invalidField = (path: string, message: string) =>
  new ApiError(422, `${path}: ${message}`, [{ path, message }]);

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "https://lakesmith.dev/problems/validation-error" }),
    title: z.string().openapi({ example: "Unprocessable Content" }),
    status: z.number().int().openapi({ example: 422 }),
    detail: z.string().openapi({ example: "name: Required" }),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi("Problem");

export function problemBody(status: number, detail: string, errors?: FieldError[]) {
  return {
    type: `https://lakesmith.dev/problems/${SLUGS[status] ?? "error"}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    ...(errors ? { errors } : {}),
  };
}

export function problemResponse(
  status: number,
  detail: string,
  errors?: FieldError[],
  headers?: HeadersInit,
): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/problem+json");
  return new Response(JSON.stringify(problemBody(status, detail, errors)), { status, headers: h });
}

/** Formats zod issues as `[{path, message}]` with dotted paths (`items.0.name`). */
export function zodFieldErrors(error: z.ZodError, prefix?: string): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    const full = [prefix, path].filter(Boolean).join(".");
    return { path: full || "(body)", message: issue.message };
  });
}

/** Hono `onError`: every thrown thing becomes a problem response; only unknown errors are 500s. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    const headers = err.status === 401 ? { "www-authenticate": 'Bearer realm="lakesmith"' } : undefined;
    return problemResponse(err.status, err.message, err.errors, headers);
  }
  if (err instanceof HTTPException) {
    const status = err.status;
    // Hono raises 400 for unparsable JSON bodies; say so plainly.
    const detail = err.message || TITLES[status] || "Request failed";
    return problemResponse(status, detail, undefined, err.res?.headers);
  }
  console.error(`[lakesmith] unhandled error on ${c.req.method} ${c.req.path}:`, err);
  return problemResponse(500, "The server failed to handle this request; the error was logged.");
}
