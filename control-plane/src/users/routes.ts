/** Users and roles (document 2): Admin only; API keys need `users:read` or `users:write`. */
import { z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import { access, type Principal } from "../auth/access.ts";
import { ROLES, type User } from "../db/schema.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  BulkResultSchema,
  BulkSsoCreateSchema,
  RoleRevokeSchema,
  toWire,
  UserCreateSchema,
  UserRolesSchema,
  UserSchema,
  UserUpdateSchema,
  type UserWire,
} from "./schemas.ts";

const IdParam = z.object({
  user_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "user_id", in: "path" } }),
});
const notFoundResponse = { 404: problemResponse("No user with this id.") };
const conflictResponse = (what: string) => ({ 409: problemResponse(what) });

const tags = ["users"];
const read = access.admin("users:read");
const write = access.admin("users:write");

const list = defineRoute({
  method: "get",
  path: "/api/v1/users",
  tags,
  summary: "List users",
  access: read,
  request: { query: pageQuery(100, 1000) },
  responses: { 200: jsonResponse("Users, oldest first.", pageOf(UserSchema, "UserPage")) },
});
const create = defineRoute({
  method: "post",
  path: "/api/v1/users",
  tags,
  summary: "Create a password or SSO user",
  access: write,
  request: { body: jsonBody(UserCreateSchema) },
  responses: {
    201: jsonResponse("Created.", UserSchema),
    ...conflictResponse("Username or email already exists."),
  },
});
const bulk = defineRoute({
  method: "post",
  path: "/api/v1/users/bulk",
  tags,
  summary: "Create SSO users from CSV",
  description:
    "One protocol (`oidc` or `saml`) and one role apply to every row. Valid rows are created even when others fail; `failed` says which rows and why.",
  access: write,
  request: { body: jsonBody(BulkSsoCreateSchema) },
  responses: { 200: jsonResponse("Rows created and rows that failed.", BulkResultSchema) },
});
const get = defineRoute({
  method: "get",
  path: "/api/v1/users/{user_id}",
  tags,
  summary: "Get a user",
  access: read,
  request: { params: IdParam },
  responses: { 200: jsonResponse("The user.", UserSchema), ...notFoundResponse },
});
const update = defineRoute({
  method: "patch",
  path: "/api/v1/users/{user_id}",
  tags,
  summary: "Activate, deactivate, change role, name or password",
  description: "Inactive users cannot log in and their tokens stop working at once.",
  access: write,
  request: { params: IdParam, body: jsonBody(UserUpdateSchema) },
  responses: {
    200: jsonResponse("Updated.", UserSchema),
    ...notFoundResponse,
    ...conflictResponse("Protected account, or deactivating yourself."),
  },
});
const remove = defineRoute({
  method: "delete",
  path: "/api/v1/users/{user_id}",
  tags,
  summary: "Delete a user",
  access: write,
  request: { params: IdParam },
  responses: {
    204: { description: "Deleted." },
    ...notFoundResponse,
    ...conflictResponse("Protected account, or yourself."),
  },
});
const roles = defineRoute({
  method: "get",
  path: "/api/v1/users/{user_id}/roles",
  tags,
  summary: "Roles of a user",
  access: read,
  request: { params: IdParam },
  responses: { 200: jsonResponse("Roles.", UserRolesSchema), ...notFoundResponse },
});
const revoke = defineRoute({
  method: "delete",
  path: "/api/v1/users/{user_id}/roles",
  tags,
  summary: "Revoke roles",
  access: write,
  request: { params: IdParam, body: jsonBody(RoleRevokeSchema) },
  responses: {
    200: jsonResponse("Roles after the revocation.", UserRolesSchema),
    ...notFoundResponse,
    ...conflictResponse("Protected account."),
  },
});

function rolesOf(user: User) {
  return { user_id: user.id, role: user.role, roles: ROLES.slice(0, ROLES.indexOf(user.role) + 1) };
}

/** The calling user's id, so nobody deletes or deactivates themselves; API keys have no self. */
/** Sends JSON text the database built (`view.ts`), typed as the route's response. */
function jsonText<T, S extends 200>(c: Context, text: string, status: S) {
  return c.body(text, status, { "content-type": "application/json" }) as unknown as Response &
    TypedResponse<T, S, "json">;
}

const selfId = (principal: Principal) => (principal.kind === "user" ? principal.userId : null);

export const userRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.users.list(offset, limit);
    const text = `{"items":${page.itemsJson},"total":${page.total},"offset":${offset},"limit":${limit}}`;
    return jsonText<{ items: UserWire[]; total: number; offset: number; limit: number }, 200>(c, text, 200);
  })
  .openapi(create, async (c) => c.json(toWire(await c.var.services.users.create(c.req.valid("json"))), 201))
  .openapi(bulk, async (c) => {
    const result = await c.var.services.users.bulkCreateSso(c.req.valid("json"));
    return c.json({ created: result.created.map(toWire), failed: result.failed }, 200);
  })
  .openapi(get, async (c) =>
    c.json(toWire(await c.var.services.users.get(c.req.valid("param").user_id)), 200),
  )
  .openapi(update, async (c) => {
    const user = await c.var.services.users.update(
      c.req.valid("param").user_id,
      c.req.valid("json"),
      selfId(c.var.principal),
    );
    return c.json(toWire(user), 200);
  })
  .openapi(remove, async (c) => {
    await c.var.services.users.delete(c.req.valid("param").user_id, selfId(c.var.principal));
    return c.body(null, 204);
  })
  .openapi(roles, async (c) =>
    c.json(rolesOf(await c.var.services.users.get(c.req.valid("param").user_id)), 200),
  )
  .openapi(revoke, async (c) => {
    const user = await c.var.services.users.revokeRoles(
      c.req.valid("param").user_id,
      c.req.valid("json").roles,
    );
    return c.json(rolesOf(user), 200);
  });
