/**
 * The one middleware that authenticates and authorizes every request.
 *
 * It finds the route that will answer (the first matched handler route), reads that route's access
 * rule from the `defineRoute` registry and applies it. Order of answers: public route → pass;
 * no or bad credential → 401; route unknown → let it fall through to 404; role or scope missing → 403.
 * A handler registered without `defineRoute` has no rule and is treated as Admin-only.
 */
import type { MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../http/env.ts";
import { forbidden, unauthorized } from "../http/problem.ts";
import { accessFor } from "../http/route.ts";
import { type Access, access, isAllowed } from "./access.ts";

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

export function guard(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const handlerRoute = matchedRoutes(c).find((r) => r.method !== "ALL");
    const required: Access | undefined = handlerRoute
      ? (accessFor(c.req.method === "HEAD" ? "GET" : c.req.method, handlerRoute.path) ?? access.admin())
      : undefined;
    if (required?.kind === "public") return next();

    const header = c.req.header("authorization");
    if (!header) throw unauthorized("Send a credential: `Authorization: Bearer <token or API key>`.");
    const match = BEARER.exec(header.trim());
    if (!match?.[1]) throw unauthorized("The Authorization header must be `Bearer <credential>`.");
    const principal = await c.var.services.auth.authenticate(match[1]);
    c.set("principal", principal);

    if (required?.kind === "guarded" && !isAllowed(principal, required)) {
      const route = `${c.req.method} ${c.req.path}`;
      throw forbidden(
        principal.kind === "user"
          ? `Role ${principal.role} may not call ${route}; it needs ${required.role} or above.`
          : `This API key lacks scope '${required.scope}' for ${route}.`,
      );
    }
    return next();
  };
}
