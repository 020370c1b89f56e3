/** `POST /api/v1/auth/login`, `/refresh` and `/logout`: the only routes that take no bearer credential. */
import { z } from "@hono/zod-openapi";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { access } from "./access.ts";

const TokenPairSchema = z
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

const login = defineRoute({
  method: "post",
  path: "/api/v1/auth/login",
  tags: ["auth"],
  summary: "Log in with username and password",
  access: access.public,
  request: { body: jsonBody(LoginSchema) },
  responses: {
    200: jsonResponse("Token pair.", TokenPairSchema),
    401: unauthorizedResponse,
    422: invalid,
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

export const authRoutes = newRouter()
  .openapi(login, async (c) => {
    const { username, password } = c.req.valid("json");
    return c.json(await c.var.services.auth.login(username, password), 200);
  })
  .openapi(refresh, async (c) =>
    c.json(await c.var.services.auth.refresh(c.req.valid("json").refresh_token), 200),
  )
  .openapi(logout, async (c) => {
    await c.var.services.auth.logout(c.req.valid("json").refresh_token);
    return c.body(null, 204);
  });
