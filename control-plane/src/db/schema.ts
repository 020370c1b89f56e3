/**
 * The control plane's whole database schema, in one place. drizzle-kit generates the migrations in
 * `control-plane/drizzle/` from this file (`npm run db:generate -w control-plane`).
 *
 * Timestamps are integer epoch milliseconds; JSON columns are text. The same schema runs on an
 * embedded libSQL file, a remote libSQL server and Cloudflare D1.
 */
import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

const createdAt = () =>
  integer("created_at", { mode: "timestamp_ms" }).notNull().default(sql`(unixepoch() * 1000)`);

export const ROLES = ["Viewer", "Editor", "Admin"] as const;
export type Role = (typeof ROLES)[number];
export const AUTH_TYPES = ["password", "oidc", "saml"] as const;
export type AuthType = (typeof AUTH_TYPES)[number];
export const USER_STATUSES = ["active", "inactive"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  username: text("username").notNull().unique(),
  /** Stored lower-cased so uniqueness is case-insensitive. */
  email: text("email").notNull().unique(),
  fullName: text("full_name").notNull(),
  /** PBKDF2 hash string; null for SSO users, who never log in with a password. */
  passwordHash: text("password_hash"),
  role: text("role", { enum: ROLES }).notNull(),
  authType: text("auth_type", { enum: AUTH_TYPES }).notNull(),
  status: text("status", { enum: USER_STATUSES }).notNull().default("active"),
  /** Built-in admin and break-glass admin: never deleted, deactivated or demoted. */
  protected: integer("protected", { mode: "boolean" }).notNull().default(false),
  lastLoginAt: integer("last_login_at", { mode: "timestamp_ms" }),
  createdAt: createdAt(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
});

export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** SHA-256 of the token; the token itself is never stored. */
    tokenHash: text("token_hash").notNull().unique(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
    createdAt: createdAt(),
  },
  (t) => [index("refresh_tokens_user_idx").on(t.userId)],
);

export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** SHA-256 of the secret; the secret is shown once at creation. */
  keyHash: text("key_hash").notNull().unique(),
  /** First characters of the key, so a user can tell keys apart in a list. */
  prefix: text("prefix").notNull(),
  scopes: text("scopes", { mode: "json" }).notNull().$type<string[]>(),
  createdBy: text("created_by"),
  expiresAt: integer("expires_at", { mode: "timestamp_ms" }),
  lastUsedAt: integer("last_used_at", { mode: "timestamp_ms" }),
  createdAt: createdAt(),
});

/**
 * Platform settings and customer configuration: one row per setting, value as JSON text. The JSON
 * is encoded by the config service rather than drizzle's json mode, so a JSON null (an unset
 * optional setting) is stored as the text "null", not as SQL NULL.
 */
export const settings = sqliteTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  updatedBy: text("updated_by"),
});

export const featureFlags = sqliteTable("feature_flags", {
  key: text("key").primaryKey(),
  enabled: integer("enabled", { mode: "boolean" }).notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});

/** Secrets this installation generated for itself (the access-token signing key). */
export const instanceSecrets = sqliteTable("instance_secrets", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: createdAt(),
});

export type User = typeof users.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
