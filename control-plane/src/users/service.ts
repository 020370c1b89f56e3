/**
 * Users and their roles (document 2). Password users log in with a PBKDF2-hashed password; SSO
 * users (OIDC, SAML 2.0) are records with no password whose username is the email's local part.
 * Usernames and emails are unique (409). Protected accounts (built-in admin, break-glass admin) are
 * never deleted, deactivated or demoted. Deactivating a user or changing their role revokes their
 * refresh tokens, so the change cannot be outlived by a session started before it.
 */

import type { z } from "@hono/zod-openapi";
import { type Clock, newId } from "@lakesmith/shared";
import { parse } from "csv-parse/sync";
import { count, eq, or, sql } from "drizzle-orm";
import { hashPassword } from "../auth/crypto.ts";
import type { Db } from "../db/index.ts";
import { jsonArrayOf } from "../db/json-text.ts";
import { ROLES, type Role, type User, users } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import {
  ApiError,
  conflict,
  type FieldError,
  invalidField,
  notFound,
  zodFieldErrors,
} from "../http/problem.ts";
import { type BulkSsoCreateSchema, type UserCreate, UserCreateSchema, type UserUpdate } from "./schemas.ts";
import { userJson } from "./view.ts";

/** A page of users whose items are JSON text (`view.ts`), ready to send. */
export interface UserPageJson {
  itemsJson: string;
  total: number;
}

export interface NewUser extends UserCreate {
  protected?: boolean;
}

export class UserService {
  // Reads built once and kept prepared (`db/statement-cache.ts`).
  private readonly reads;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Called after a change that can alter what a credential may do (status, role, deletion). */
    private readonly onAccessChange: () => void = () => {},
    /** Revokes every refresh token of a user (`AuthService.revokeRefreshTokens`). */
    private readonly revokeRefreshTokens: (userId: string) => Promise<void> = async () => {},
  ) {
    const page = db
      .select({ item: sql<string>`${userJson}`.as("item") })
      .from(users)
      .orderBy(users.createdAt, users.id)
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .as("page");
    const items = db.select({ items: jsonArrayOf(page.item) }).from(page);
    const total = db.select({ n: count() }).from(users);
    this.reads = {
      // The page and the total in one statement: each call into the driver costs more than
      // counting a table of users.
      page: preparedSelect(
        db,
        db.select({ items: sql<string>`(${items})`, total: sql<number>`(${total})` }).from(sql`(select 1)`),
      ),
      byId: preparedSelect(
        db,
        db
          .select()
          .from(users)
          .where(eq(users.id, sql.placeholder("id"))),
      ),
      byUsername: preparedSelect(
        db,
        db
          .select()
          .from(users)
          .where(eq(users.username, sql.placeholder("username"))),
      ),
    };
  }

  /** Users, oldest first, as JSON text (`view.ts`), and how many there are. */
  async list(offset: number, limit: number): Promise<UserPageJson> {
    const page = await this.reads.page.get({ offset, limit });
    return { itemsJson: page?.items ?? "[]", total: page?.total ?? 0 };
  }

  async get(id: string): Promise<User> {
    const user = await this.reads.byId.get({ id });
    if (!user) throw notFound("User", id);
    return user;
  }

  async findByUsername(username: string): Promise<User | undefined> {
    return this.reads.byUsername.get({ username });
  }

  /** Creates a user; 409 naming the field when the username or email is taken. */
  async create(input: NewUser): Promise<User> {
    const email = input.email.toLowerCase();
    const username = input.auth_type === "password" ? (input.username ?? "") : ssoUsername(email);
    const [created] = await this.db
      .insert(users)
      .values({
        id: newId("usr"),
        username,
        email,
        fullName: input.full_name,
        passwordHash:
          input.auth_type === "password" && input.password ? await hashPassword(input.password) : null,
        role: input.role,
        authType: input.auth_type,
        status: "active",
        protected: input.protected ?? false,
        createdAt: this.clock.now(),
      })
      .onConflictDoNothing()
      .returning();
    if (created) return created;
    const [taken] = await this.db
      .select({ username: users.username, email: users.email })
      .from(users)
      .where(or(eq(users.username, username), eq(users.email, email)));
    const field = taken?.email === email ? "email" : "username";
    throw new ApiError(
      409,
      `A user with ${field} '${field === "email" ? email : username}' already exists.`,
      [{ path: field, message: "already exists" }],
    );
  }

  async update(id: string, patch: UserUpdate, actorId: string | null): Promise<User> {
    const user = await this.get(id);
    if (user.protected && patch.status === "inactive")
      throw conflict(`User '${user.username}' is protected and cannot be deactivated.`);
    if (user.protected && patch.role && patch.role !== "Admin")
      throw conflict(`User '${user.username}' is protected and must stay Admin.`);
    if (actorId === id && patch.status === "inactive")
      throw conflict("You cannot deactivate your own account.");
    if (patch.password !== undefined && user.authType !== "password")
      throw invalidField("password", "SSO users have no password");
    const [updated] = await this.db
      .update(users)
      .set({
        ...(patch.status ? { status: patch.status } : {}),
        ...(patch.role ? { role: patch.role } : {}),
        ...(patch.full_name ? { fullName: patch.full_name } : {}),
        ...(patch.password ? { passwordHash: await hashPassword(patch.password) } : {}),
        updatedAt: this.clock.now(),
      })
      .where(eq(users.id, id))
      .returning();
    if (!updated) throw notFound("User", id);
    const deactivated = patch.status === "inactive" && user.status !== "inactive";
    if (deactivated || (patch.role !== undefined && patch.role !== user.role))
      await this.revokeRefreshTokens(id);
    this.onAccessChange();
    return updated;
  }

  async delete(id: string, actorId: string | null): Promise<void> {
    const user = await this.get(id);
    if (user.protected) throw conflict(`User '${user.username}' is protected and cannot be deleted.`);
    if (actorId === id) throw conflict("You cannot delete your own account.");
    await this.db.delete(users).where(eq(users.id, id));
    this.onAccessChange();
  }

  /**
   * Revokes roles. Roles are cumulative, so revoking a role also revokes those above it and the
   * user keeps the highest role below the lowest one revoked. Revoking a role not held is a no-op.
   */
  async revokeRoles(id: string, revoke: Role[]): Promise<User> {
    if (revoke.includes("Viewer"))
      throw invalidField("roles", "Viewer is the base role of every user and cannot be revoked");
    const user = await this.get(id);
    const lowest = Math.min(...revoke.map((r) => ROLES.indexOf(r)));
    if (ROLES.indexOf(user.role) < lowest) return user;
    const role = ROLES[lowest - 1] ?? "Viewer";
    if (user.protected) throw conflict(`User '${user.username}' is protected and must stay Admin.`);
    return this.update(id, { role }, null);
  }

  /** Creates SSO users from CSV rows; valid rows are created even when others fail. */
  async bulkCreateSso(input: z.infer<typeof BulkSsoCreateSchema>) {
    let rows: string[][];
    try {
      rows = parse(input.csv, { skip_empty_lines: true, trim: true, relax_column_count: true, bom: true });
    } catch (err) {
      throw invalidField("csv", `not valid CSV: ${(err as Error).message}`);
    }
    const header = (rows[0] ?? []).map((h) => h.toLowerCase());
    const nameAt = header.indexOf("full_name");
    const emailAt = header.indexOf("email");
    const missing = [nameAt < 0 && "full_name", emailAt < 0 && "email"].filter(Boolean);
    if (missing.length > 0) throw invalidField("csv", `the header row lacks ${missing.join(" and ")}`);
    const records = rows.slice(1).map((row) => ({ full_name: row[nameAt] ?? "", email: row[emailAt] ?? "" }));

    const created: User[] = [];
    const failed: { row: number; email: string | null; errors: FieldError[] }[] = [];
    for (const [index, record] of records.entries()) {
      const row = index + 1;
      const parsed = UserCreateSchema.safeParse({
        full_name: record.full_name,
        email: record.email,
        role: input.role,
        auth_type: input.auth_type,
      });
      if (!parsed.success) {
        failed.push({ row, email: record.email || null, errors: zodFieldErrors(parsed.error) });
        continue;
      }
      try {
        created.push(await this.create(parsed.data));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        failed.push({
          row,
          email: parsed.data.email,
          errors: err.errors ?? [{ path: "(row)", message: err.message }],
        });
      }
    }
    return { created, failed };
  }
}

/** The username of an SSO user: the email's local part, lower-cased. */
export function ssoUsername(email: string): string {
  return (email.split("@")[0] ?? email).toLowerCase();
}
