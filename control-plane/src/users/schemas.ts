/** Wire shapes of users (document 2): snake_case fields, password write-only. */
import { z } from "@hono/zod-openapi";
import { AUTH_TYPES, ROLES, USER_STATUSES, type User } from "../db/schema.ts";

export const USERNAME = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, "1-64 letters, digits, '.', '_' or '-'")
  .openapi({ example: "jdoe" });
const EMAIL = z.email().max(254).openapi({ example: "jane.doe@example.com" });
const FULL_NAME = z.string().trim().min(1).max(200).openapi({ example: "Jane Doe" });
export const PASSWORD = z.string().min(8, "at least 8 characters").max(256);

export const RoleSchema = z
  .enum(ROLES)
  .openapi({ description: "Viewer (read only), Editor (writes), Admin (all)." });
const SsoAuthType = z.enum(["oidc", "saml"]);

export const UserSchema = z
  .object({
    id: z.string(),
    full_name: z.string(),
    username: z.string(),
    email: z.string(),
    role: RoleSchema,
    auth_type: z.enum(AUTH_TYPES),
    status: z.enum(USER_STATUSES),
    protected: z
      .boolean()
      .openapi({ description: "Built-in or break-glass admin: never deleted or deactivated." }),
    last_login_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("User");
export type UserWire = z.infer<typeof UserSchema>;

export const UserCreateSchema = z
  .strictObject({
    full_name: FULL_NAME,
    email: EMAIL,
    role: RoleSchema,
    auth_type: z.enum(AUTH_TYPES).default("password").openapi({
      description: "`password` users log in with a password; `oidc` and `saml` users through SSO.",
    }),
    username: USERNAME.optional().openapi({
      description: "Login name of a password user (immutable). SSO users get the email's local part.",
    }),
    password: PASSWORD.optional().openapi({
      description: "Initial password of a password user; write-only.",
    }),
  })
  .superRefine((body, ctx) => {
    if (body.auth_type === "password") {
      if (!body.username)
        ctx.addIssue({ code: "custom", path: ["username"], message: "required for password users" });
      if (!body.password)
        ctx.addIssue({ code: "custom", path: ["password"], message: "required for password users" });
    } else {
      if (body.password !== undefined)
        ctx.addIssue({ code: "custom", path: ["password"], message: "SSO users have no password" });
      if (body.username !== undefined)
        ctx.addIssue({
          code: "custom",
          path: ["username"],
          message: "SSO usernames are derived from the email's local part; omit it",
        });
    }
  })
  .openapi("UserCreate");
export type UserCreate = z.infer<typeof UserCreateSchema>;

export const UserUpdateSchema = z
  .strictObject({
    status: z.enum(USER_STATUSES).optional().openapi({ description: "Activate or deactivate the account." }),
    role: RoleSchema.optional(),
    full_name: FULL_NAME.optional(),
    password: PASSWORD.optional().openapi({ description: "New password (password users only); write-only." }),
  })
  .openapi("UserUpdate");
export type UserUpdate = z.infer<typeof UserUpdateSchema>;

export const UserRolesSchema = z
  .object({
    user_id: z.string(),
    role: RoleSchema,
    roles: z
      .array(RoleSchema)
      .openapi({ description: "Effective roles; roles are cumulative (Admin ⊃ Editor ⊃ Viewer)." }),
  })
  .openapi("UserRoles");

export const RoleRevokeSchema = z
  .strictObject({
    roles: z.array(RoleSchema).min(1).openapi({
      description:
        "Roles to revoke. Revoking a role also revokes every role above it; the user keeps the highest role below. Viewer cannot be revoked.",
    }),
  })
  .openapi("RoleRevoke");

export const BulkSsoCreateSchema = z
  .strictObject({
    csv: z.string().min(1).max(1_000_000).openapi({
      description:
        "CSV text whose header row has `full_name` and `email` (any order; other columns ignored).",
    }),
    auth_type: SsoAuthType,
    role: RoleSchema,
  })
  .openapi("BulkSsoUserCreate");

export const BulkResultSchema = z
  .object({
    created: z.array(UserSchema),
    failed: z.array(
      z.object({
        row: z
          .number()
          .int()
          .openapi({ description: "1-based number of the data row; the header row is not counted." }),
        email: z.string().nullable(),
        errors: z.array(z.object({ path: z.string(), message: z.string() })),
      }),
    ),
  })
  .openapi("BulkSsoUserResult");

export function toWire(user: User): UserWire {
  return {
    id: user.id,
    full_name: user.fullName,
    username: user.username,
    email: user.email,
    role: user.role,
    auth_type: user.authType,
    status: user.status,
    protected: user.protected,
    last_login_at: user.lastLoginAt?.toISOString() ?? null,
    created_at: user.createdAt.toISOString(),
  };
}
