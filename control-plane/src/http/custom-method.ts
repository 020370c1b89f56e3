/**
 * Custom methods in document 2's style: `POST .../policies/{policy_id}:enable`. Hono's router
 * matches whole path segments, so a parameter followed by `:verb` in the same segment can't be
 * routed as written; here the last parameter's pattern takes the whole segment (`[^/]+:enable`)
 * and the handler receives the parameter without its verb. The OpenAPI document shows the path as
 * written, and the guard finds the route's access under the routing path it really has.
 *
 * @example
 * mountCustomMethod(router, enableRoute, (c, params) => c.json(await svc.enable(params.policy_id), 200));
 */
import type { OpenAPIHono, RouteConfig, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Access } from "../auth/access.ts";
import type { AppEnv } from "./env.ts";
import { validationFailed } from "./problem.ts";
import { defineRoute, registerAccess } from "./route.ts";

type ParamsOf<R extends RouteConfig> = R["request"] extends { params: infer P extends z.ZodType }
  ? z.infer<P>
  : never;

interface CustomRoute<R extends RouteConfig> {
  route: R;
  routingPath: string;
  verb: string;
  last: string;
}

/** Declares a custom-method route; `config.path` ends with `/{param}:verb`. */
export function defineCustomMethod<R extends RouteConfig>(config: R & { access: Access }): CustomRoute<R> {
  const match = /\/\{([a-z_]+)\}:([a-z_-]+)$/.exec(config.path);
  if (!match) throw new Error(`not a custom-method path: ${config.path}`);
  const [, last, verb] = match as unknown as [string, string, string];
  const route = defineRoute(config);
  const base = config.path.slice(0, config.path.length - match[0].length).replaceAll(/\/{(.+?)}/g, "/:$1");
  const routingPath = `${base}/:${last}{[^/]+:${verb}}`;
  registerAccess(config.method, routingPath, config.access);
  return { route, routingPath, verb, last };
}

/** Routes a custom method: validates the parameters (422 naming the field) and calls `handler`. */
export function mountCustomMethod<R extends RouteConfig>(
  router: OpenAPIHono<AppEnv>,
  custom: CustomRoute<R>,
  handler: (c: Context<AppEnv>, params: ParamsOf<R>) => Promise<Response>,
): void {
  router.openAPIRegistry.registerPath(custom.route);
  const schema = custom.route.request?.params as z.ZodType | undefined;
  const suffix = `:${custom.verb}`;
  router.on(custom.route.method.toUpperCase(), custom.routingPath, async (c) => {
    const raw: Record<string, string> = { ...c.req.param() };
    const value = raw[custom.last] ?? "";
    raw[custom.last] = value.endsWith(suffix) ? value.slice(0, -suffix.length) : value;
    const parsed = schema ? schema.safeParse(raw) : { success: true as const, data: raw };
    if (!parsed.success) throw validationFailed(parsed.error);
    return handler(c, parsed.data as ParamsOf<R>);
  });
}
