/** `POST /api/v1/auth/login`, `/refresh` and `/logout`: the only routes that take no bearer credential. */
import { z } from "@hono/zod-openapi";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { access } from "./access.ts";
import type { ClientAddress } from "./client-address.ts";
import { LoginThrottle, throttledLogin } from "./throttle.ts";

export const TokenPairSchema = z
  .object({
    access_token: z
      .string()
      .openapi({ description: "Signed JWT; send as `Authorization: Bearer <access_token>`." }),
    refresh_token: z
      .string()
      .openapi({ description: "Single-use; exchanging it at /auth/refresh revokes it." }),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int().openapi({ description: "Seconds until the access token expires." }),
  })
  .openapi("TokenPair");

const LoginSchema = z
  .strictObject({ username: z.string().min(1).max(256), password: z.string().min(1).max(1024) })
  .openapi("LoginRequest");
const RefreshSchema = z.strictObject({ refresh_token: z.string().min(1).max(512) }).openapi("RefreshRequest");

const unauthorizedResponse = problemResponse(
  "Wrong credentials, inactive account, or an invalid, expired or reused refresh token.",
);
const invalid = problemResponse("Validation failed.");

const THROTTLE_DESCRIPTION =
  "Failed logins are throttled per client address and per account at that address. After " +
  "`login_failures_per_account` (default 5) failed attempts on one account, or `login_failures_per_client` " +
  "(default 20) on any accounts, from one address within `login_failure_window_seconds` (default 900), " +
  "that address gets 429 with `Retry-After` for 1 s, then 2 s, 4 s, ... per further failure, up to " +
  "`login_lockout_max_seconds` (default 300); a 429 attempt checks no password and is not counted. A " +
  "successful login clears the address's counts. Counting per address means failures from elsewhere " +
  "never lock an account, the break-glass admin included, out for others. The address is the TCP peer " +
  "(Node) or `CF-Connecting-IP` (Workers); `X-Forwarded-For` counts only behind proxies declared with " +
  "`LAKESMITH_TRUST_PROXY_HOPS`. The limits are settings of `/api/v1/config`.";

const login = defineRoute({
  method: "post",
  path: "/api/v1/auth/login",
  tags: ["auth"],
  summary: "Log in with username and password",
  description: THROTTLE_DESCRIPTION,
  access: access.public,
  request: { body: jsonBody(LoginSchema) },
  responses: {
    200: jsonResponse("Token pair.", TokenPairSchema),
    401: unauthorizedResponse,
    403: problemResponse(
      "Right password, but password logins are turned off (`sso_enforced`) for everyone but the break-glass account.",
    ),
    422: invalid,
    429: {
      ...problemResponse(
        "Too many failed logins from this address (for this account, or for any); wait `Retry-After` seconds. See the operation's description for the limits.",
      ),
      headers: {
        "Retry-After": {
          description: "Whole seconds until this address may try again.",
          schema: { type: "integer", minimum: 1 },
        },
      },
    },
  },
});
const refresh = defineRoute({
  method: "post",
  path: "/api/v1/auth/refresh",
  tags: ["auth"],
  summary: "Exchange a refresh token for a new token pair (rotation)",
  access: access.public,
  request: { body: jsonBody(RefreshSchema) },
  responses: {
    200: jsonResponse("New token pair; the old refresh token stops working.", TokenPairSchema),
    401: unauthorizedResponse,
    403: problemResponse(
      "A password user's token while `sso_enforced` is on (the break-glass account excepted).",
    ),
    422: invalid,
  },
});
const logout = defineRoute({
  method: "post",
  path: "/api/v1/auth/logout",
  tags: ["auth"],
  summary: "Revoke a refresh token",
  description: "Idempotent: an unknown or already revoked token also answers 204.",
  access: access.public,
  request: { body: jsonBody(RefreshSchema) },
  responses: { 204: { description: "Revoked." }, 422: invalid },
});

/** The auth routes; `clientAddress` tells the login throttle where a request comes from. */
export const authRoutes = (clientAddress: ClientAddress) =>
  newRouter()
    .openapi(login, async (c) => {
      const { username, password } = c.req.valid("json");
      const { auth, db, config, clock } = c.var.services;
      const throttle = new LoginThrottle(db, config, clock);
      const pair = await throttledLogin(throttle, username, clientAddress(c), () =>
        auth.login(username, password),
      );
      return c.json(pair, 200);
    })
    .openapi(refresh, async (c) =>
      c.json(await c.var.services.auth.refresh(c.req.valid("json").refresh_token), 200),
    )
    .openapi(logout, async (c) => {
      await c.var.services.auth.logout(c.req.valid("json").refresh_token);
      return c.body(null, 204);
    });
