/**
 * `defineRoute` wraps `createRoute` from @hono/zod-openapi and records who may call the route.
 * The guard middleware looks every request's matched route up in this registry; a route that was
 * never declared here is treated as Admin-only, so a new route can't forget its guard.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { type Access, describeAccess } from "../auth/access.ts";
import { ProblemSchema } from "./problem.ts";

const registry = new Map<string, Access>();

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

/** Error responses every guarded route can give, documented once here. */
const commonProblems = {
  400: problem("Malformed JSON body."),
  401: problem("Missing, malformed, expired or revoked credential."),
  403: problem("The caller's role or API key scopes do not allow this route."),
  422: problem("Validation failed; `errors` names each field that is wrong."),
};

function registryKey(method: string, honoPath: string): string {
  return `${method.toUpperCase()} ${honoPath}`;
}

/**
 * Declares an OpenAPI route with its access rule.
 *
 * @example
 * const getConfig = defineRoute({ method: "get", path: "/api/v1/config", access: access.read("config"), responses: {...} });
 */
export function defineRoute<R extends RouteConfig>(config: R & { access: Access }): R {
  const { access: required, ...rest } = config;
  const isPublic = required.kind === "public";
  const route = createRoute({
    ...rest,
    description: [rest.description, `**Access:** ${describeAccess(required)}`].filter(Boolean).join("\n\n"),
    ...(isPublic ? { security: [] } : {}),
    responses: { ...(isPublic ? {} : commonProblems), ...rest.responses },
    "x-lakesmith-access": required,
  } as unknown as R);
  registry.set(registryKey(route.method, route.getRoutingPath()), required);
  return route;
}

/** Records the access rule of a route Hono matches under `honoPath` (a custom method's, `http/custom-method.ts`). */
export function registerAccess(method: string, honoPath: string, required: Access): void {
  registry.set(registryKey(method, honoPath), required);
}

/** The access rule of a route, by method and Hono path (`/api/v1/users/:id`). */
export function accessFor(method: string, honoPath: string): Access | undefined {
  return registry.get(registryKey(method, honoPath));
}
