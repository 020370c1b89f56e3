/**
 * The one error shape of every Lakesmith HTTP service: RFC 9457 `application/problem+json` with
 * `type`, `title`, `status`, `detail` and, for validation failures, `errors: [{path, message}]`.
 * Services throw `ApiError`; each service's `onError` turns it into `problemResponse(...)`.
 */

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
  426: "Upgrade Required",
  422: "Unprocessable Content",
  429: "Too Many Requests",
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
  426: "upgrade-required",
  422: "validation-error",
  429: "too-many-requests",
  500: "internal-error",
  503: "unavailable",
};

/** An error raised on purpose; the service's error handler turns it into a problem response. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 426 | 500 | 503,
    detail: string,
    readonly errors?: FieldError[],
  ) {
    super(detail);
    this.name = "ApiError";
  }
}

/** A 422 naming one field, e.g. `invalidField("expires_at", "must be in the future")`. */
export const invalidField = (path: string, message: string) =>
  new ApiError(422, `${path}: ${message}`, [{ path, message }]);

export function problemBody(status: number, detail: string, errors?: FieldError[]) {
  return {
    type: `https://lakesmith.dev/problems/${SLUGS[status] ?? "error"}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    ...(errors ? { errors } : {}),
  };
}

/** A complete `application/problem+json` response. */
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
