/** A router for one resource: an OpenAPIHono whose validation failures are 422 problems. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";
import { ApiError, zodFieldErrors } from "./problem.ts";

export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const errors = zodFieldErrors(result.error);
        throw new ApiError(422, errors.map((e) => `${e.path}: ${e.message}`).join("; "), errors);
      }
    },
  });
}
