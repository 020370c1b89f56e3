/**
 * The one error shape: RFC 9457 `application/problem+json` with `type`, `title`, `status`, `detail`
 * and, for validation failures, `errors: [{path, message}]`.
 *
 * Handlers and services throw `ApiError`; `onError` and `notFound` turn everything into a problem
 * response. Nothing unexpected leaks a stack trace: unknown errors become a bare 500 and are logged.
 */

import { z } from "@hono/zod-openapi";
import { ApiError, type FieldError, problemResponse } from "@lakesmith/shared";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";

export { ApiError, type FieldError, invalidField, problemBody, problemResponse } from "@lakesmith/shared";

export const notFound = (what: string, id: string) => new ApiError(404, `${what} '${id}' does not exist.`);
export const conflict = (detail: string) => new ApiError(409, detail);
export const forbidden = (detail: string) => new ApiError(403, detail);
export const unauthorized = (detail: string) => new ApiError(401, detail);

export const ProblemSchema = z
  .object({
    type: z.string().openapi({ example: "https://lakesmith.dev/problems/validation-error" }),
    title: z.string().openapi({ example: "Unprocessable Content" }),
    status: z.number().int().openapi({ example: 422 }),
    detail: z.string().openapi({ example: "name: Required" }),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi("Problem");

/** Formats zod issues as `[{path, message}]` with dotted paths (`items.0.name`). */
export function zodFieldErrors(error: z.ZodError, prefix?: string): FieldError[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    const full = [prefix, path].filter(Boolean).join(".");
    return { path: full || "(body)", message: issue.message };
  });
}

/** The 422 of a request that failed validation: each field's problem listed, and all of them in one line. */
export function validationFailed(error: z.ZodError): ApiError {
  const errors = zodFieldErrors(error);
  return new ApiError(422, errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors);
}

/**
 * Zod issues as one line, `path: message; ...` (at most `limit` of them), `whole` standing for an
 * empty path: for messages about a value an agent or a caller sent that is not a request body.
 */
export function issueSummary(error: z.ZodError, whole: string, limit = Number.POSITIVE_INFINITY): string {
  return error.issues
    .slice(0, limit)
    .map((i) => `${i.path.map(String).join(".") || whole}: ${i.message}`)
    .join("; ");
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
    const detail = err.message || "Request failed";
    return problemResponse(status, detail, undefined, err.res?.headers);
  }
  console.error(`[lakesmith] unhandled error on ${c.req.method} ${c.req.path}:`, err);
  return problemResponse(500, "The server failed to handle this request; the error was logged.");
}
