/** A router for one resource: an OpenAPIHono whose validation failures are 422 problems. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";
import { validationFailed } from "./problem.ts";

export function newRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationFailed(result.error);
    },
  });
}
