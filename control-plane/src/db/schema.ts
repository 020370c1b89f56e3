/**
 * The control plane's whole database schema, in one place. drizzle-kit generates the migrations in
 * `control-plane/drizzle/` from this file (`npm run db:generate -w control-plane`).
 *
 * Timestamps are integer epoch milliseconds; JSON columns are text. The same schema runs on an
 * embedded libSQL file, a remote libSQL server and Cloudflare D1.
 */

import { CATALOG_TYPES } from "@lakesmith/shared/catalogs";
import type { Layout } from "@lakesmith/shared/jobs";
import type { ExpiredFile, SupersededRef, VacuumMode } from "@lakesmith/shared/maintenance";
import type { OpportunityScanResult } from "@lakesmith/shared/opportunities";
import type { OptimusFilterSet, OptimusVolume } from "@lakesmith/shared/optimus";
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

const createdAt = () =>
  integer("created_at", { mode: "timestamp_ms" }).notNull().default(sql`(unixepoch() * 1000)`);

export const ROLES = ["Viewer", "Editor", "Admin"] as const;
export type Role = (typeof ROLES)[number];
export const AUTH_TYPES = ["password", "oidc", "saml"] as const;
export type AuthType = (typeof AUTH_TYPES)[number];
export const USER_STATUSES = ["active", "inactive"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

export const users = sqliteTable(
  "users",
  {
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
    /**
     * The user as the JSON text of `UserSchema`, copied by triggers from the view `user_wire`
     * (migration 0009) whenever one of its fields changes, so a page of the user list reads each
     * user's JSON instead of building it (`users/view.ts`). Never written by the application.
     */
    wire: text("wire"),
  },
  // The list's order: a page is read in index order instead of sorting every user.
  (t) => [index("users_created_idx").on(t.createdAt, t.id)],
);

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

/**
 * Failed-login counters (`auth/throttle.ts`), one row per client and per account at a client. The
 * key is a SHA-256, so neither addresses nor tried usernames are stored. Rows whose `expires_at`
 * has passed are deleted as new failures arrive.
 */
export const loginThrottle = sqliteTable(
  "login_throttle",
  {
    key: text("key").primaryKey(),
    failures: integer("failures").notNull(),
    blockedUntil: integer("blocked_until", { mode: "timestamp_ms" }),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("login_throttle_expires_idx").on(t.expiresAt)],
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

// ---------------------------------------------------------------------------------------------
// Single sign-on (`sso/`): one OIDC and one SAML provider, logins in flight, replay protection

export const SSO_PROTOCOLS = ["oidc", "saml"] as const;
export type SsoProtocol = (typeof SSO_PROTOCOLS)[number];

/** The installation's identity providers: at most one row per protocol. */
export const ssoProviders = sqliteTable("sso_providers", {
  protocol: text("protocol", { enum: SSO_PROTOCOLS }).primaryKey(),
  /** The provider's settings as JSON text (issuer, client id, certificates, ...), no secret among them. */
  settings: text("settings").notNull(),
  /** The OIDC client secret, encrypted under `sso_providers/<protocol>`; null when none. */
  secret: text("secret"),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  updatedBy: text("updated_by"),
});

/**
 * Logins started and not yet finished: keyed by the SHA-256 of the OIDC `state` or the SAML
 * request id, holding what the callback must check (nonce, PKCE verifier, browser binding).
 */
export const ssoRequests = sqliteTable(
  "sso_requests",
  {
    key: text("key").primaryKey(),
    protocol: text("protocol", { enum: SSO_PROTOCOLS }).notNull(),
    /** JSON text: what the callback checks (nonce, PKCE verifier, browser binding); lives 10 minutes. */
    data: text("data").notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("sso_requests_expires_idx").on(t.expiresAt)],
);

/** One-time codes a finished SSO login hands to the console, exchanged once for a token pair. */
export const ssoLoginCodes = sqliteTable(
  "sso_login_codes",
  {
    /** SHA-256 of the code; the code itself is never stored. */
    codeHash: text("code_hash").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("sso_login_codes_expires_idx").on(t.expiresAt)],
);

/** SAML assertion ids already accepted, kept until the assertion expires, so each is accepted once. */
export const samlAssertions = sqliteTable(
  "saml_assertions",
  {
    id: text("id").primaryKey(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("saml_assertions_expires_idx").on(t.expiresAt)],
);

// ---------------------------------------------------------------------------------------------
// Tables, schedules and their audit (document 1: tables, schedules, onboarding, slots)

export const TABLE_FORMATS = ["delta", "iceberg", "hive"] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];
export const PRIORITIES = ["P1", "P2"] as const;
export type Priority = (typeof PRIORITIES)[number];
export const ONBOARDING_STATUSES = ["pending", "active", "failed", "retry"] as const;
export type OnboardingStatus = (typeof ONBOARDING_STATUSES)[number];

/** What onboarding inspection found: the table's recipe for later jobs. */
export interface OnboardingRecipe {
  partition_columns: string[];
  partition_pattern: string | null;
  date_filter_column: string | null;
  cluster_columns: string[];
  enumerated_columns: string[];
}

/** Registered tables (`tables` in the API; `lakeTables` here so it can't be confused with drizzle's). */
export const lakeTables = sqliteTable(
  "tables",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    uri: text("uri").notNull(),
    format: text("format", { enum: TABLE_FORMATS }).notNull(),
    priority: text("priority", { enum: PRIORITIES }).notNull(),
    targetFileSizeMb: integer("target_file_size_mb").notNull().default(512),
    /** Crunch may write Parquet v2 data pages and encodings: every reader of the table accepts them. */
    parquetV2: integer("parquet_v2", { mode: "boolean" }).notNull().default(false),
    inventoryReportUri: text("inventory_report_uri"),
    /**
     * The canonical key of `uri` (`@lakesmith/shared/locations`, `locationKey`): what the table's
     * jobs name as the location an agent must be allowed to use. Set at creation; rows made before
     * it existed are filled in by the bootstrap.
     */
    locationKey: text("location_key"),
    /**
     * The catalog connection and synced table (`catalog_tables.full_name`) the table was onboarded
     * through; null for a table registered by its URI. Its jobs load and commit it through that catalog.
     */
    catalogConnectionId: text("catalog_connection_id"),
    catalogFullName: text("catalog_full_name"),
    /** When a catalog sync marked the linked synced table deleted (its schedules were disabled then). */
    catalogTableDeletedAt: integer("catalog_table_deleted_at", { mode: "timestamp_ms" }),
    onboardingStatus: text("onboarding_status", { enum: ONBOARDING_STATUSES }).notNull().default("pending"),
    onboardingError: text("onboarding_error"),
    onboardingJobId: text("onboarding_job_id"),
    recipe: text("recipe", { mode: "json" }).$type<OnboardingRecipe>(),
    onboardedAt: integer("onboarded_at", { mode: "timestamp_ms" }),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
    /**
     * The table's own fields as the JSON text of `TableSchema` without `schedule` and without the
     * closing brace, copied by triggers from the view `table_wire` (migrations 0005 and 0006)
     * whenever one of them changes, so a page of the table list reads each table's JSON instead of
     * building it (`tables/view.ts`). Never written by the application.
     */
    wire: text("wire"),
  },
  (t) => [
    index("tables_status_name_idx").on(t.onboardingStatus, t.name),
    // Empty once the bootstrap has filled older rows: the start-up probe for them reads nothing.
    index("tables_location_unset_idx").on(t.id).where(sql`${t.locationKey} is null`),
    // Only linked tables: what a catalog sync's end looks up by connection.
    index("tables_catalog_idx")
      .on(t.catalogConnectionId, t.catalogFullName)
      .where(sql`${t.catalogConnectionId} is not null`),
  ],
);

export const SCHEDULE_JOB_TYPES = ["crunch", "vacuum", "partition_expiration"] as const;
export type ScheduleJobType = (typeof SCHEDULE_JOB_TYPES)[number];
export const SCHEDULE_TYPES = ["daily", "backfill"] as const;
export type ScheduleType = (typeof SCHEDULE_TYPES)[number];

export const schedules = sqliteTable(
  "schedules",
  {
    id: text("id").primaryKey(),
    tableId: text("table_id")
      .notNull()
      .references(() => lakeTables.id, { onDelete: "cascade" }),
    jobType: text("job_type", { enum: SCHEDULE_JOB_TYPES }).notNull(),
    scheduleType: text("schedule_type", { enum: SCHEDULE_TYPES }).notNull(),
    lookbackStart: integer("lookback_start"),
    lookbackEnd: integer("lookback_end"),
    /** HH:MM, UTC. */
    runTimeUtc: text("run_time_utc"),
    backfillCol: text("backfill_col"),
    /** YYYY-MM-DD. */
    backfillStartDate: text("backfill_start_date"),
    backfillEndDate: text("backfill_end_date"),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /**
     * When the scheduler should next fire this schedule (epoch ms); null when it never fires again
     * (a backfill that has fired). The tick reads only rows due by now, so its cost follows the due
     * schedules, not the total.
     */
    nextRunAt: integer("next_run_at", { mode: "timestamp_ms" }),
    /** The slot the schedule last fired for (`YYYY-MM-DD` for daily, `backfill` for backfill). */
    lastSlot: text("last_slot"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
    /**
     * The schedule as the JSON text of `ScheduleSchema` without the fields the scheduler moves
     * (`next_run_at`, `last_slot`, `updated_at`) and without the closing brace, copied by triggers
     * from the view `schedule_wire` (migration 0005) when any other field changes; readers add those three (`tables/view.ts`).
     * A tick's writes never fire them. Never written by the application.
     */
    wire: text("wire"),
  },
  (t) => [
    uniqueIndex("schedules_table_job_type_idx").on(t.tableId, t.jobType),
    index("schedules_due_idx").on(t.enabled, t.nextRunAt),
    index("schedules_run_time_idx").on(t.runTimeUtc),
  ],
);

/** Append-only audit of `inventory_report_uri` changes; no foreign key, so it outlives the table. */
export const inventoryHistory = sqliteTable(
  "inventory_history",
  {
    id: text("id").primaryKey(),
    tableId: text("table_id").notNull(),
    tableName: text("table_name").notNull(),
    previousUri: text("previous_uri"),
    inventoryReportUri: text("inventory_report_uri"),
    changedBy: text("changed_by"),
    changedAt: integer("changed_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("inventory_history_table_idx").on(t.tableId, t.changedAt)],
);

/**
 * The latest opportunity scan of each table (`opportunities/`): what a crunch would gain, measured by
 * an agent on a sample (`OpportunityScanResult`), with the snapshot it measured. Written only by the
 * batch that ends a succeeded `opportunity_scan` job, and only over an older measurement.
 */
export const tableOpportunities = sqliteTable("table_opportunities", {
  tableId: text("table_id")
    .primaryKey()
    .references(() => lakeTables.id, { onDelete: "cascade" }),
  jobId: text("job_id").notNull(),
  measuredAt: integer("measured_at", { mode: "timestamp_ms" }).notNull(),
  /** The snapshot measured: Delta log version, Iceberg metadata version, Hive commit stamp. */
  tableVersion: integer("table_version").notNull(),
  potentialDrrPercent: real("potential_drr_percent"),
  smallFiles: integer("small_files").notNull(),
  smallFileShare: real("small_file_share").notNull(),
  missingOrdering: integer("missing_ordering", { mode: "boolean" }).notNull(),
  result: text("result", { mode: "json" }).notNull().$type<OpportunityScanResult>(),
});
export type TableOpportunity = typeof tableOpportunities.$inferSelect;

/**
 * How many tables have each onboarding status, kept exact by triggers on `tables` (migrations 0002
 * and 0004), so the total of a table list costs one row read instead of a count over every table.
 * `generation` goes up whenever a table joins or leaves the status (or, with it, is renamed): a
 * position in the status's list by name stays where it was while its generation does, which is
 * what lets a list remember where its deep pages start (`tables/bookmarks.ts`).
 */
export const tableStatusCounts = sqliteTable("table_status_counts", {
  status: text("status", { enum: ONBOARDING_STATUSES }).primaryKey(),
  n: integer("n").notNull().default(0),
  generation: integer("generation").notNull().default(0),
});

// ---------------------------------------------------------------------------------------------
// Jobs and agents (architecture.md, "Jobs and leases")

export const JOB_STATUSES = [
  "queued",
  "offered",
  "running",
  "cancelling",
  "succeeded",
  "failed",
  "cancelled",
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Every piece of work an agent does. The row is the truth: each status move is one conditional
 * UPDATE keyed on (id, fence); the fence is bumped on every offer, so a message about an earlier
 * offer can never move the job.
 */
export const jobs = sqliteTable(
  "jobs",
  {
    id: text("id").primaryKey(),
    kind: text("kind").notNull(),
    /** The table the job works on, when it works on one. No foreign key: job history outlives tables. */
    tableId: text("table_id"),
    priority: text("priority", { enum: PRIORITIES }).notNull().default("P2"),
    payload: text("payload", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    /** Capabilities an agent must have announced besides the kind (for example `s3`). */
    requires: text("requires", { mode: "json" }).notNull().$type<string[]>(),
    /**
     * Location keys (`locationKey`) the job touches: it is offered only to an agent whose allow list
     * covers every one of them.
     */
    locations: text("locations", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
    /** Endpoint keys (`endpointKey`) of catalogs and metastores the agent must be allowed to reach. */
    endpoints: text("endpoints", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
    /**
     * The exclusivity group of the job's kind (`jobs/kinds.ts`); null when it takes part in none.
     * Two jobs of a group whose `locks` overlap never hold agents at the same time.
     */
    exclusion: text("exclusion"),
    /** Scopes the job holds in its group (`table:<id>/`, ...); one overlaps another it starts with. */
    locks: text("locks", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
    /** Agents that refused the job (their allow list): it is not offered to them again. */
    refusals: text("refusals", { mode: "json" }).notNull().$type<JobRefusal[]>().default(sql`'[]'`),
    status: text("status", { enum: JOB_STATUSES }).notNull().default("queued"),
    /** Leases granted so far; an offer that is never acknowledged does not count. */
    attempt: integer("attempt").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(3),
    fence: integer("fence").notNull().default(0),
    /** The agent the job is offered or leased to. */
    leaseOwner: text("lease_owner"),
    /** Offer deadline while offered; lease expiry while running or cancelling. */
    leaseExpiresAt: integer("lease_expires_at", { mode: "timestamp_ms" }),
    /** A queued job is not offered before this time (backoff after a failed attempt). */
    notBefore: integer("not_before", { mode: "timestamp_ms" }).notNull(),
    /** Idempotency key, for example `schedule:<id>:<slot>`; unique when set. */
    dedupeKey: text("dedupe_key").unique(),
    trigger: text("trigger").notNull().default("manual"),
    scheduleId: text("schedule_id"),
    progress: text("progress", { mode: "json" }).$type<Record<string, unknown>>(),
    /**
     * The last part of its output the job's lease applied (protocol `part`): its fence and number.
     * A part is applied only as the next one of the current fence (`jobs/parts.ts`).
     */
    partFence: integer("part_fence"),
    partSeq: integer("part_seq"),
    result: text("result", { mode: "json" }).$type<Record<string, unknown>>(),
    error: text("error"),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
    startedAt: integer("started_at", { mode: "timestamp_ms" }),
    finishedAt: integer("finished_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    index("jobs_dispatch_idx").on(t.status, t.kind, t.priority, t.notBefore, t.createdAt),
    index("jobs_lease_idx").on(t.status, t.leaseExpiresAt),
    index("jobs_owner_idx").on(t.leaseOwner, t.status),
    index("jobs_table_idx").on(t.tableId, t.kind, t.createdAt),
    // A table's jobs of every kind newest first (document 2's runs), without sorting them.
    index("jobs_table_created_idx").on(t.tableId, t.createdAt),
    index("jobs_kind_created_idx").on(t.kind, t.createdAt),
    index("jobs_exclusion_idx").on(t.exclusion, t.status, t.tableId),
    // Few jobs are ever refused: this keeps finding an agent's refusals cheap however long the queue.
    index("jobs_refused_idx").on(t.status).where(sql`${t.refusals} != '[]'`),
  ],
);

/** An agent's refusal of a job it was offered. */
export interface JobRefusal {
  agent_id: string;
  reason: string;
  at: string;
}

export const AGENT_STATUSES = ["connected", "draining", "disconnected"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];

export const agents = sqliteTable("agents", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  /** SHA-256 of the agent token; the token is shown once at creation. */
  tokenHash: text("token_hash").notNull().unique(),
  tokenPrefix: text("token_prefix").notNull(),
  createdBy: text("created_by"),
  createdAt: createdAt(),
  revokedAt: integer("revoked_at", { mode: "timestamp_ms" }),
  /** What the agent announced on its last connection. */
  version: text("version"),
  kinds: text("kinds", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
  capabilities: text("capabilities", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
  /** The storage prefixes its allow list permits, as announced. */
  allow: text("allow", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
  /** The catalog and metastore endpoints it may reach, as announced. */
  endpoints: text("endpoints", { mode: "json" }).notNull().$type<string[]>().default(sql`'[]'`),
  capacity: integer("capacity").notNull().default(0),
  status: text("status", { enum: AGENT_STATUSES }).notNull().default("disconnected"),
  connectedAt: integer("connected_at", { mode: "timestamp_ms" }),
  lastSeenAt: integer("last_seen_at", { mode: "timestamp_ms" }),
});

// ---------------------------------------------------------------------------------------------
// Pending deletions (document 1, "Pending deletions"; `pending-deletions/`)

/**
 * PENDING_DELETE: proposed by a vacuum or an expiration, recoverable, hard-deleted once eligible.
 * RECOVERING: a recover job is putting the file back into the table (expired partitions only).
 * RECOVERED: kept for good; never hard-deleted, and vacuum never proposes its path again.
 * DELETING: claimed by a hard-delete job. DELETED: the file is gone (or was already absent).
 * RETAINED: hard-delete found the file referenced by the table again and kept it; never deleted.
 */
export const PENDING_DELETION_STATUSES = [
  "PENDING_DELETE",
  "RECOVERING",
  "RECOVERED",
  "DELETING",
  "DELETED",
  "RETAINED",
] as const;
export type PendingDeletionStatus = (typeof PENDING_DELETION_STATUSES)[number];
/** Statuses in which a file may still be deleted: one record per (table, path) at most. */
export const LIVE_DELETION_STATUSES = ["PENDING_DELETE", "RECOVERING", "DELETING"] as const;
export const DELETION_ACTION_TYPES = ["vacuum", "partition_expiration", "crunch", "remove_inputs"] as const;
export type DeletionActionType = (typeof DELETION_ACTION_TYPES)[number];
export const DELETION_REASONS = [
  "tombstone",
  "orphan",
  "expired_partition",
  "expired_snapshot",
  "superseded",
  "converted_input",
] as const;
export type DeletionReason = (typeof DELETION_REASONS)[number];
export const DELETION_VACUUM_MODES = ["lite", "full"] as const satisfies readonly VacuumMode[];

/**
 * One file a vacuum or a partition expiration proposed for deletion. Rows are written by the
 * finish hooks of those jobs, set-based, and never deleted: a DELETED row is the audit of the
 * delete. No foreign key: like jobs, the records outlive their table.
 */
export const pendingDeletions = sqliteTable(
  "pending_deletions",
  {
    id: text("id").primaryKey(),
    /** The table whose file it is; null for a prefix's record (`prefixId`). */
    tableId: text("table_id"),
    /** The managed prefix whose converted input it is (`remove_inputs`); null for a table's record. */
    prefixId: text("prefix_id"),
    /** The vacuum, partition_expiration, crunch or prefix_remove_inputs job that proposed the file. */
    sourceJobId: text("source_job_id").notNull(),
    actionType: text("action_type", { enum: DELETION_ACTION_TYPES }).notNull(),
    /** The vacuum's mode; null for expiration records. */
    vacuumMode: text("vacuum_mode", { enum: DELETION_VACUUM_MODES }),
    reason: text("reason", { enum: DELETION_REASONS }).notNull(),
    /** Store key relative to the table's root, decoded (`date=2026-01-01/part-0.parquet`). */
    path: text("path").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    /** `col=value` of the expired partition; null for vacuum records. */
    partition: text("partition"),
    /**
     * Expiration records: the file's `add` action, what a recover commits again. Hive crunch
     * records: the partition's old and new folder, what a recover moves back.
     */
    file: text("file", { mode: "json" }).$type<ExpiredFile | SupersededRef>(),
    status: text("status", { enum: PENDING_DELETION_STATUSES }).notNull().default("PENDING_DELETE"),
    /** Hard-delete picks the record from this time on. */
    eligibleAt: integer("eligible_at", { mode: "timestamp_ms" }).notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
    recoveredAt: integer("recovered_at", { mode: "timestamp_ms" }),
    recoverReason: text("recover_reason"),
    recoveredBy: text("recovered_by"),
    recoverJobId: text("recover_job_id"),
    hardDeleteJobId: text("hard_delete_job_id"),
    deletedAt: integer("deleted_at", { mode: "timestamp_ms" }),
    /** Why the record is where it is, when that is not obvious (a failed delete, a retained file). */
    note: text("note"),
  },
  (t) => [
    uniqueIndex("pending_deletions_live_path_idx")
      .on(t.tableId, t.path)
      .where(sql`${t.status} in ('PENDING_DELETE', 'RECOVERING', 'DELETING')`),
    index("pending_deletions_recovered_path_idx").on(t.tableId, t.path).where(sql`${t.status} = 'RECOVERED'`),
    uniqueIndex("pending_deletions_prefix_live_path_idx")
      .on(t.prefixId, t.path)
      .where(sql`${t.prefixId} is not null and ${t.status} in ('PENDING_DELETE', 'RECOVERING', 'DELETING')`),
    index("pending_deletions_prefix_created_idx").on(t.prefixId, t.createdAt),
    // Every key below ends in the rowid SQLite appends to each index entry: a job's records share
    // created_at and eligible_at, so they are appended in insertion order instead of scattered by
    // their random ids (100,000 records: about 7 s with (..., id) keys, under 2 s with these).
    index("pending_deletions_due_idx").on(t.status, t.eligibleAt),
    index("pending_deletions_table_due_idx").on(t.tableId, t.status, t.eligibleAt),
    index("pending_deletions_created_idx").on(t.createdAt),
    index("pending_deletions_status_created_idx").on(t.status, t.createdAt),
    index("pending_deletions_table_created_idx").on(t.tableId, t.createdAt),
    index("pending_deletions_source_idx").on(t.sourceJobId, t.createdAt),
    index("pending_deletions_hard_delete_idx").on(t.hardDeleteJobId),
  ],
);

// ---------------------------------------------------------------------------------------------
// Catalog connections and their synced tables (document 1, "Catalog connections"; `catalog-connections/`)

/**
 * idle: never synced. running: a sync is queued, offered or running (a retry after a lost lease
 * stays running). completed / failed: how the latest sync ended (a cancelled sync is failed).
 */
export const SYNC_STATUSES = ["idle", "running", "completed", "failed"] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/**
 * A catalog the agents read table metadata from. The credentials' secret fields (`SECRET_FIELDS`
 * of `@lakesmith/shared/catalogs`) are one JSON object encrypted under `catalog_connections/<id>`
 * (`secrets/stored.ts`); the other fields are plain JSON in `settings`.
 */
export const catalogConnections = sqliteTable(
  "catalog_connections",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    type: text("type", { enum: CATALOG_TYPES }).notNull(),
    /** The type's fields that are not secret (`workspace_url`, `client_id`, ...). */
    settings: text("settings", { mode: "json" }).notNull().$type<Record<string, string>>(),
    /** The type's secret fields as JSON text, encrypted: an `enc:v1:...` envelope. */
    secrets: text("secrets").notNull(),
    /** The names of the secret fields stored (never their values), so views need not decrypt. */
    secretFields: text("secret_fields", { mode: "json" }).notNull().$type<string[]>(),
    isActive: integer("is_active", { mode: "boolean" }).notNull().default(true),
    syncIntervalHours: integer("sync_interval_hours").notNull().default(24),
    syncStatus: text("sync_status", { enum: SYNC_STATUSES }).notNull().default("idle"),
    /** When the latest successful sync ended. */
    lastSyncedAt: integer("last_synced_at", { mode: "timestamp_ms" }),
    /** Why the latest sync failed; null after a successful one. */
    lastSyncError: text("last_sync_error"),
    /** The latest sync job; only its end moves `sync_status`. */
    lastSyncJobId: text("last_sync_job_id"),
    /** When the latest sync was queued (manual or scheduled): the scheduler's next one is an interval later. */
    syncRequestedAt: integer("sync_requested_at", { mode: "timestamp_ms" }),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
  },
  (t) => [index("catalog_connections_active_idx").on(t.isActive, t.name)],
);

/**
 * A table a sync reported, one row per connection and `full_name`. Written only by the finish hook
 * of `catalog_sync` jobs (`catalog-connections/record.ts`), set-based; a table the catalog no
 * longer reports is marked (`deleted_at`), not removed. No foreign key: deleting a connection
 * deletes its rows in the same batch, and a late sync's hook writes nothing for a connection gone.
 */
export const catalogTables = sqliteTable(
  "catalog_tables",
  {
    connectionId: text("connection_id").notNull(),
    fullName: text("full_name").notNull(),
    catalog: text("catalog").notNull(),
    schema: text("schema").notNull(),
    name: text("name").notNull(),
    format: text("format"),
    tableType: text("table_type"),
    location: text("location"),
    sizeBytes: integer("size_bytes"),
    hasPartitions: integer("has_partitions", { mode: "boolean" }),
    /** When the catalog last changed the table (epoch ms, the catalog's word); null when it does not say. */
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
    /** The catalog's own record of the table. */
    detail: text("detail", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    /** When a sync last reported the table (changed or unchanged). */
    syncedAt: integer("synced_at", { mode: "timestamp_ms" }).notNull(),
    /** When a sync first reported the table: the start of its existence for qualification (`min_existence_days`). */
    firstSyncedAt: integer("first_synced_at", { mode: "timestamp_ms" }),
    /**
     * The sync that last saw it (reported it read, or confirmed it unchanged), and that sync's
     * fence (its attempt): a sync that succeeds marks deleted the live rows its own attempt did not see.
     */
    syncJobId: text("sync_job_id").notNull(),
    syncFence: integer("sync_fence"),
    deletedAt: integer("deleted_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    primaryKey({ columns: [t.connectionId, t.fullName] }),
    // The browse filters and sorts, each led by the connection (every read names one).
    index("catalog_tables_schema_idx").on(t.connectionId, t.catalog, t.schema, t.name),
    index("catalog_tables_name_idx").on(t.connectionId, t.name),
    index("catalog_tables_size_idx").on(t.connectionId, t.sizeBytes),
    index("catalog_tables_updated_idx").on(t.connectionId, t.updatedAt),
    index("catalog_tables_synced_idx").on(t.connectionId, t.syncedAt),
    // Document 2's tables of one catalog, live only, paged by keyset on full_name (`catalogs/`).
    index("catalog_tables_live_idx")
      .on(t.connectionId, t.catalog, t.fullName)
      .where(sql`${t.deletedAt} is null`),
    // Document 1's list of live tables, one per sort key, each ending in the tie-break full_name:
    // the page's keys and its total are read from the index alone, never from the rows (whose
    // `detail` spills into overflow pages ahead of `deleted_at`).
    index("catalog_tables_live_full_name_idx")
      .on(t.connectionId, t.fullName)
      .where(sql`${t.deletedAt} is null`),
    index("catalog_tables_live_name_idx")
      .on(t.connectionId, t.name, t.fullName)
      .where(sql`${t.deletedAt} is null`),
    // The keys that may be null (size, last change) sort unknown values last either way: their
    // nullness leads the order (`catalog-connections/browse.ts`, `orderBy`), one index per
    // direction, so even a descending list or one cut by size reads in index order, never sorts.
    index("catalog_tables_live_size_asc_idx")
      .on(t.connectionId, sql`${t.sizeBytes} is null`, t.sizeBytes, t.fullName)
      .where(sql`${t.deletedAt} is null`),
    index("catalog_tables_live_size_desc_idx")
      .on(t.connectionId, sql`${t.sizeBytes} is null`, sql`${t.sizeBytes} desc`, t.fullName)
      .where(sql`${t.deletedAt} is null`),
    index("catalog_tables_live_updated_asc_idx")
      .on(t.connectionId, sql`${t.updatedAt} is null`, t.updatedAt, t.fullName, t.sizeBytes)
      .where(sql`${t.deletedAt} is null`),
    index("catalog_tables_live_updated_desc_idx")
      .on(t.connectionId, sql`${t.updatedAt} is null`, sql`${t.updatedAt} desc`, t.fullName, t.sizeBytes)
      .where(sql`${t.deletedAt} is null`),
    index("catalog_tables_live_synced_idx")
      .on(t.connectionId, t.syncedAt, t.fullName)
      .where(sql`${t.deletedAt} is null`),
  ],
);

// ---------------------------------------------------------------------------------------------
// Object maintenance (document 1): locations, their prefixes, and each prefix's policy versions.

export const LOCATION_STATUSES = ["Pending", "Discovering", "Active", "Archived"] as const;
export type LocationStatus = (typeof LOCATION_STATUSES)[number];
export const DISCOVERY_METHODS = ["use_as_registered", "inventory_report"] as const;
export const MANAGEMENT_STATES = ["unmanaged", "active", "paused", "error"] as const;
export type ManagementState = (typeof MANAGEMENT_STATES)[number];
export const SOURCE_STATES = ["present", "missing"] as const;

/** A place in object storage whose raw files Lakesmith looks after. */
export const locations = sqliteTable("locations", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  description: text("description"),
  /** Canonical storage URI, ending without `/`. */
  uri: text("uri").notNull(),
  discoveryMethod: text("discovery_method", { enum: DISCOVERY_METHODS }).notNull(),
  inventoryUri: text("inventory_uri"),
  inventoryFormat: text("inventory_format", { enum: ["parquet"] }),
  discoveryCadence: text("discovery_cadence", { enum: ["daily", "weekly"] }).notNull(),
  skipAgeDays: integer("skip_age_days").notNull(),
  runDiscoveryImmediately: integer("run_discovery_immediately", { mode: "boolean" }).notNull(),
  inputFormat: text("input_format", { enum: ["json"] }).notNull(),
  status: text("status", { enum: LOCATION_STATUSES }).notNull(),
  /** What the location was before it was archived, restored when it is un-archived. */
  statusBeforeArchive: text("status_before_archive", { enum: LOCATION_STATUSES }),
  lastDiscoveredAt: integer("last_discovered_at", { mode: "timestamp_ms" }),
  createdBy: text("created_by"),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
});

/** A managed prefix: durable, kept (with `location_id` null) when its location is deleted. */
export const prefixes = sqliteTable(
  "prefixes",
  {
    id: text("id").primaryKey(),
    locationId: text("location_id"),
    /** Canonical storage URI of the prefix, without a trailing `/`. */
    uri: text("uri").notNull().unique(),
    managementState: text("management_state", { enum: MANAGEMENT_STATES }).notNull(),
    /** Why the prefix is paused or in error. */
    stateReason: text("state_reason"),
    sourceState: text("source_state", { enum: SOURCE_STATES }).notNull(),
    /** When a discovery first no longer found the prefix; null while present. */
    missingSince: integer("missing_since", { mode: "timestamp_ms" }),
    files: integer("files"),
    bytes: integer("bytes"),
    newestObjectAt: integer("newest_object_at", { mode: "timestamp_ms" }),
    discoveredAt: integer("discovered_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("prefixes_location_idx").on(t.locationId, t.uri)],
);

/** Every version of a prefix's policy; at most one active per prefix. */
export const prefixPolicies = sqliteTable(
  "prefix_policies",
  {
    id: text("id").primaryKey(),
    prefixId: text("prefix_id").notNull(),
    version: integer("version").notNull(),
    active: integer("active", { mode: "boolean" }).notNull(),
    policy: text("policy", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    /** The active version's next scheduled conversion (its convert's cadence and run time); null when none. */
    nextRunAt: integer("next_run_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    uniqueIndex("prefix_policies_version_idx").on(t.prefixId, t.version),
    uniqueIndex("prefix_policies_active_idx").on(t.prefixId).where(sql`${t.active} = 1`),
    index("prefix_policies_due_idx").on(t.nextRunAt).where(sql`${t.active} = 1`),
  ],
);

export const PREFIX_ACTIONS = ["convert", "remove_inputs"] as const;
export type PrefixAction = (typeof PREFIX_ACTIONS)[number];
export const PREFIX_RUN_TRIGGERS = ["schedule", "action"] as const;

/**
 * One conversion or maintenance job of a managed prefix (the API's runs), queued by its policy's
 * schedule or by an ad-hoc action (the API's actions: the rows with trigger `action`). The job row
 * holds its status and metrics; this row ties it to the prefix and says why it ran.
 */
export const prefixRuns = sqliteTable(
  "prefix_runs",
  {
    jobId: text("job_id").primaryKey(),
    prefixId: text("prefix_id").notNull(),
    action: text("action", { enum: PREFIX_ACTIONS }).notNull(),
    trigger: text("trigger", { enum: PREFIX_RUN_TRIGGERS }).notNull(),
    /** The policy version whose settings the job ran with. */
    policyVersion: integer("policy_version"),
    requestedBy: text("requested_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    index("prefix_runs_prefix_idx").on(t.prefixId, t.createdAt),
    index("prefix_runs_trigger_idx").on(t.prefixId, t.trigger, t.createdAt),
  ],
);
export type PrefixRun = typeof prefixRuns.$inferSelect;

export const DISCOVERY_STATUSES = [
  "queued",
  "running",
  "paused",
  "completed",
  "failed",
  "cancelled",
] as const;
export type DiscoveryStatus = (typeof DISCOVERY_STATUSES)[number];
export const DISCOVERY_FILTERS = [
  "claimed",
  "too_young",
  "empty",
  "no_data_files",
  "below_min_size",
] as const;
export type DiscoveryFilter = (typeof DISCOVERY_FILTERS)[number];

/**
 * One discovery attempt of a location (the API's "discovery schedule"): its status, its current
 * job, the report it reads and its live counts. Deleted with its location.
 */
export const discoverySchedules = sqliteTable(
  "discovery_schedules",
  {
    id: text("id").primaryKey(),
    locationId: text("location_id").notNull(),
    status: text("status", { enum: DISCOVERY_STATUSES }).notNull(),
    trigger: text("trigger", { enum: ["manual", "schedule", "creation"] }).notNull(),
    /** The attempt's current job (a resume or restart queues another). */
    jobId: text("job_id"),
    /** The manifest read; a resumed attempt reads the same one. */
    report: text("report"),
    binsTotal: integer("bins_total"),
    binsDone: integer("bins_done").notNull().default(0),
    binsSkipped: integer("bins_skipped").notNull().default(0),
    /** Bytes of the report's data files (the plan's size). */
    totalBytes: integer("total_bytes"),
    /** Bytes of the data files of the bins done: what the wall-time estimate scales. */
    doneBinBytes: integer("done_bin_bytes").notNull().default(0),
    /** Objects and bytes under the location in the bins done. */
    filesSeen: integer("files_seen").notNull().default(0),
    bytesSeen: integer("bytes_seen").notNull().default(0),
    objectsScanned: integer("objects_scanned").notNull().default(0),
    error: text("error"),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    /** When its first part arrived (the plan); the wall-time estimate counts from here. */
    startedAt: integer("started_at", { mode: "timestamp_ms" }),
    endedAt: integer("ended_at", { mode: "timestamp_ms" }),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    index("discovery_schedules_location_idx").on(t.locationId, t.createdAt),
    index("discovery_schedules_job_idx").on(t.jobId),
  ],
);

/** The bins (inventory data files) of an attempt's report, and how far each got. */
export const discoveryBins = sqliteTable(
  "discovery_bins",
  {
    attemptId: text("attempt_id").notNull(),
    binId: text("bin_id").notNull(),
    position: integer("position").notNull(),
    key: text("key").notNull(),
    size: integer("size").notNull(),
    status: text("status", { enum: ["pending", "reading", "done", "skipped"] }).notNull(),
    files: integer("files"),
    bytes: integer("bytes"),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.binId] })],
);

/** Per-bin, per-prefix aggregates of a running attempt; replaced when a bin is read again. */
export const discoveryAggregates = sqliteTable(
  "discovery_aggregates",
  {
    attemptId: text("attempt_id").notNull(),
    binId: text("bin_id").notNull(),
    /** Location-relative, ending with `/`; `""` is the location itself. */
    prefix: text("prefix").notNull(),
    files: integer("files").notNull(),
    bytes: integer("bytes").notNull(),
    dataFiles: integer("data_files").notNull(),
    dataBytes: integer("data_bytes").notNull(),
    oldestAt: integer("oldest_at", { mode: "timestamp_ms" }),
    newestAt: integer("newest_at", { mode: "timestamp_ms" }),
  },
  (t) => [primaryKey({ columns: [t.attemptId, t.binId, t.prefix] })],
);

/** The prefixes a completed attempt found, each with its filter outcome (null: it survived). */
export const discoveredPrefixes = sqliteTable(
  "discovered_prefixes",
  {
    attemptId: text("attempt_id").notNull(),
    locationId: text("location_id").notNull(),
    prefix: text("prefix").notNull(),
    uri: text("uri").notNull(),
    files: integer("files").notNull(),
    bytes: integer("bytes").notNull(),
    dataFiles: integer("data_files").notNull(),
    dataBytes: integer("data_bytes").notNull(),
    oldestAt: integer("oldest_at", { mode: "timestamp_ms" }),
    newestAt: integer("newest_at", { mode: "timestamp_ms" }),
    filter: text("filter", { enum: DISCOVERY_FILTERS }),
  },
  (t) => [
    primaryKey({ columns: [t.attemptId, t.prefix] }),
    index("discovered_prefixes_location_idx").on(t.locationId),
  ],
);

export type Location = typeof locations.$inferSelect;
export type Prefix = typeof prefixes.$inferSelect;
export type PrefixPolicy = typeof prefixPolicies.$inferSelect;
export type DiscoverySchedule = typeof discoverySchedules.$inferSelect;
export type DiscoveredPrefix = typeof discoveredPrefixes.$inferSelect;

export type LakeTable = typeof lakeTables.$inferSelect;
export type Schedule = typeof schedules.$inferSelect;
export type Job = typeof jobs.$inferSelect;
export type Agent = typeof agents.$inferSelect;
export type PendingDeletion = typeof pendingDeletions.$inferSelect;

export type CatalogConnection = typeof catalogConnections.$inferSelect;
export type CatalogTable = typeof catalogTables.$inferSelect;

export type User = typeof users.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;

// ---------------------------------------------------------------------------------------------
// Notifications (issue 23, "Notifications and reports"; `notifications/`)

export const NOTIFICATION_KINDS = ["job_failed", "report_daily", "report_weekly"] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
export const NOTIFICATION_CHANNELS = ["email", "chat"] as const;
export type NotificationChannel = (typeof NOTIFICATION_CHANNELS)[number];
/**
 * new: written with its event, its addressees not yet read from the settings. pending: due at
 * `next_attempt_at`. sending: claimed by `claimed_by` until `claim_expires_at`. sent, failed (gave
 * up; `last_error` says why), skipped (nothing to send to, or waited too long for a transport).
 * waiting_for_transport: no email transport or no chat webhook yet; new again once there is one.
 * fanned_out: a chat event split into one row per webhook.
 */
export const NOTIFICATION_STATUSES = [
  "new",
  "pending",
  "sending",
  "sent",
  "failed",
  "skipped",
  "waiting_for_transport",
  "fanned_out",
] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

/** What a notification says, rendered once so every attempt sends the same words. */
export interface NotificationContent {
  subject: string;
  text: string;
  html: string;
  /** The chat message (Slack-compatible: `text`, and blocks). */
  chat: { text: string; blocks?: unknown[] };
}

/**
 * The outbox: one row per message to one channel. Rows of a job's failure are written in the batch
 * that ends the job; a report's by the tick that finds its period due, keyed by the period. See
 * `notifications/outbox.ts` for the claim and retry protocol.
 */
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    /** One row per event and channel (and webhook): `job-failed:<job>:email`, `report:daily:<date>:chat#<fp>`. */
    dedupeKey: text("dedupe_key").notNull().unique(),
    kind: text("kind", { enum: NOTIFICATION_KINDS }).notNull(),
    channel: text("channel", { enum: NOTIFICATION_CHANNELS }).notNull(),
    status: text("status", { enum: NOTIFICATION_STATUSES }).notNull(),
    jobId: text("job_id"),
    /** A report's period: the UTC date it is sent on. */
    period: text("period"),
    /** A chat row's webhook: a fingerprint of its URL (the URL itself stays in the encrypted setting). */
    target: text("target"),
    /** The webhook as masks show it (`https://hooks.slack.com/••••x9Zq`). */
    targetLabel: text("target_label"),
    recipients: text("recipients", { mode: "json" }).$type<string[]>(),
    content: text("content", { mode: "json" }).$type<NotificationContent>(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at", { mode: "timestamp_ms" }).notNull(),
    claimedBy: text("claimed_by"),
    claimExpiresAt: integer("claim_expires_at", { mode: "timestamp_ms" }),
    lastError: text("last_error"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
    sentAt: integer("sent_at", { mode: "timestamp_ms" }),
  },
  (t) => [
    index("notifications_due_idx").on(t.status, t.nextAttemptAt),
    index("notifications_created_idx").on(t.createdAt),
  ],
);
export type Notification = typeof notifications.$inferSelect;

// ---------------------------------------------------------------------------------------------
// Policies and managed tables (document 2): see `policies/` and `managed-tables/`.

export const POLICY_SCOPES = ["catalog", "prefix", "table"] as const;
export type PolicyScope = (typeof POLICY_SCOPES)[number];

/**
 * A policy of one catalog (a connection and a catalog name, document 2's `catalog_id`), at one
 * scope: the whole catalog (`target` empty), a namespace prefix (`target` the prefix, levels joined
 * by `.`) or one table (`target` its `full_name`). One policy per scope: a second POST replaces it.
 */
export const policies = sqliteTable(
  "policies",
  {
    id: text("id").primaryKey(),
    connectionId: text("connection_id").notNull(),
    catalog: text("catalog").notNull(),
    scope: text("scope", { enum: POLICY_SCOPES }).notNull(),
    target: text("target").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    /** The policy's actions, their parameters and schedules (`policies/schemas.ts`, `PolicyBody`). */
    body: text("body", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    /** Goes up with every change, so a managed table can say which version it runs. */
    version: integer("version").notNull().default(1),
    createdBy: text("created_by"),
    createdAt: createdAt(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
  },
  (t) => [uniqueIndex("policies_scope_idx").on(t.connectionId, t.catalog, t.scope, t.target)],
);
export type Policy = typeof policies.$inferSelect;

/**
 * One row per synced table at least one policy applies to (enabled or not): the managed tables.
 * Written by the resolution (`policies/resolve.ts`), set-based, whenever a policy changes or a sync
 * of a catalog with policies ends; read by the engine (`policies/engine.ts`) when `next_run_at` is due.
 */
export const managedTables = sqliteTable(
  "managed_tables",
  {
    connectionId: text("connection_id").notNull(),
    fullName: text("full_name").notNull(),
    catalog: text("catalog").notNull(),
    schema: text("schema").notNull(),
    name: text("name").notNull(),
    /** The effective policy: the table's, else the longest prefix's, else the catalog's; enabled only. */
    policyId: text("policy_id"),
    /** The Lakesmith table the engine onboarded for it (`tables.id`); null until then. */
    lakeTableId: text("lake_table_id"),
    /** Why the table runs nothing yet (qualification, onboarding, format); null when it runs. */
    waitingReason: text("waiting_reason"),
    /** When the engine last checked whether its opportunities need measuring again; null: never. */
    opportunitiesCheckedAt: integer("opportunities_checked_at", { mode: "timestamp_ms" }),
    /** When the engine looks at the table next (epoch ms); null when nothing is scheduled. */
    nextRunAt: integer("next_run_at", { mode: "timestamp_ms" }),
    /** When a resolution first found it managed. */
    managedSince: integer("managed_since", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.connectionId, t.fullName] }),
    // The list walks this index in order and filters `q` on its `name`, fetching only rows it keeps.
    index("managed_tables_list_idx").on(t.fullName, t.connectionId, t.name),
    // The total of a list filtered by `q`: counted from this index, over the range of names that
    // start with the pattern's literal head (either case).
    index("managed_tables_name_idx").on(sql`lower(${t.name})`),
    index("managed_tables_due_idx").on(t.nextRunAt).where(sql`${t.nextRunAt} is not null`),
    index("managed_tables_scope_idx").on(t.connectionId, t.catalog, t.schema),
    index("managed_tables_policy_idx").on(t.policyId),
    index("managed_tables_lake_idx").on(t.lakeTableId).where(sql`${t.lakeTableId} is not null`),
    // Onboarded tables by when their opportunities were last checked (never first: NULLs sort first).
    index("managed_tables_opportunities_idx")
      .on(t.opportunitiesCheckedAt)
      .where(sql`${t.lakeTableId} is not null`),
  ],
);
export type ManagedTable = typeof managedTables.$inferSelect;

/**
 * The catalogs that have policies: when their tables were last resolved (a sync that ended later
 * is resolved again by the engine) and the catalog's emergency stop.
 */
export const policyCatalogs = sqliteTable(
  "policy_catalogs",
  {
    connectionId: text("connection_id").notNull(),
    catalog: text("catalog").notNull(),
    resolvedAt: integer("resolved_at", { mode: "timestamp_ms" }),
    /** Its managed tables, counted by each resolution: the list's total without reading every row. */
    managedCount: integer("managed_count").notNull().default(0),
    pausedAt: integer("paused_at", { mode: "timestamp_ms" }),
    pausedBy: text("paused_by"),
  },
  (t) => [primaryKey({ columns: [t.connectionId, t.catalog] })],
);
export type PolicyCatalog = typeof policyCatalogs.$inferSelect;

/**
 * Savings and metrics, rolled up per table per UTC day (`savings/rollup.ts`), so a read sums a few
 * rows instead of every job's JSON result. The statements that end a succeeded crunch or optimize,
 * a committed partition expiration or a hard delete add that job's figures to its table's row of
 * the day it finished and to the all-tables row (`table_id` = `*`) of that day, in the same batch.
 * Counters only: a row is never rewritten otherwise, and it outlives its table (like jobs).
 */
export const savingsDaily = sqliteTable(
  "savings_daily",
  {
    /** The Lakesmith table's id, or `*` for the sum over every table. */
    tableId: text("table_id").notNull(),
    /** The UTC day the jobs finished, `YYYY-MM-DD`. */
    day: text("day").notNull(),
    /** Committed rewrites (crunch and optimize jobs). */
    rewrites: integer("rewrites").notNull().default(0),
    /** Bytes of the files the rewrites replaced, and of the files that replaced them. */
    bytesBefore: integer("bytes_before").notNull().default(0),
    bytesAfter: integer("bytes_after").notNull().default(0),
    filesBefore: integer("files_before").notNull().default(0),
    filesAfter: integer("files_after").notNull().default(0),
    partitionsCrunched: integer("partitions_crunched").notNull().default(0),
    /** Partitions removed from the table by committed partition expirations. */
    partitionsDeleted: integer("partitions_deleted").notNull().default(0),
    /** Files (and their bytes) that hard deletes removed from storage. */
    filesDeleted: integer("files_deleted").notNull().default(0),
    bytesDeleted: integer("bytes_deleted").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tableId, t.day] })],
);
export type SavingsDay = typeof savingsDaily.$inferSelect;

/**
 * The jobs whose figures `savings_daily` holds: the guard that makes a finish hook's rollup count
 * a job once, however often its statements run.
 */
export const savingsCounted = sqliteTable("savings_counted", {
  jobId: text("job_id").primaryKey(),
});

export const OPTIMUS_ENGINE_VALUES = ["spark", "trino", "sql"] as const;
export const OPTIMUS_RUN_TRIGGERS = ["created", "schedule", "sync_now", "retry"] as const;
export type OptimusRunTrigger = (typeof OPTIMUS_RUN_TRIGGERS)[number];

/**
 * An Optimus submission (document 1, "Optimus"; the API's `/optimus/runs`): where an engine's query
 * logs live and when to analyse them each day. `last_run_*` is what the latest ended run's finish
 * hook recorded (`optimus/kind.ts`).
 */
export const optimusSubmissions = sqliteTable(
  "optimus_submissions",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    engine: text("engine", { enum: OPTIMUS_ENGINE_VALUES }).notNull(),
    lookbackDays: integer("lookback_days").notNull(),
    /** `HH:MM`, zero-padded, so text order is time order. */
    dailySyncTimeUtc: text("daily_sync_time_utc").notNull(),
    queryLogsUri: text("query_logs_uri").notNull(),
    active: integer("active", { mode: "boolean" }).notNull(),
    lastRunStatus: text("last_run_status", { enum: ["succeeded", "failed"] }),
    lastRunError: text("last_run_error"),
    lastRunFinishedAt: integer("last_run_finished_at", { mode: "timestamp_ms" }),
    createdBy: text("created_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("optimus_submissions_due_idx").on(t.dailySyncTimeUtc).where(sql`${t.active} = 1`)],
);
export type OptimusSubmission = typeof optimusSubmissions.$inferSelect;

/**
 * One run of a submission: its `query_log_analysis` job (which holds status, error and timings) and
 * why it ran. `slot_day` is the UTC day a scheduled run fired for, or the day a created run stands in for (null for sync-now and retry).
 */
export const optimusRuns = sqliteTable(
  "optimus_runs",
  {
    jobId: text("job_id").primaryKey(),
    submissionId: text("submission_id").notNull(),
    trigger: text("trigger", { enum: OPTIMUS_RUN_TRIGGERS }).notNull(),
    slotDay: text("slot_day"),
    windowStart: text("window_start").notNull(),
    windowEnd: text("window_end").notNull(),
    requestedBy: text("requested_by"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [
    index("optimus_runs_submission_idx").on(t.submissionId, t.createdAt),
    /** A scheduled run per submission and UTC day, whatever ticks or control planes race. */
    uniqueIndex("optimus_runs_slot_idx").on(t.submissionId, t.slotDay),
  ],
);
export type OptimusRun = typeof optimusRuns.$inferSelect;

/**
 * One table's workload of one run (a `query_log_analysis` part, `optimus/kind.ts`): the filter sets
 * its scans fell into over the run's window. Written once per run and table, whatever parts are
 * re-sent; the run's `layout_scoring` job of the table replays it.
 */
export const optimusWorkloads = sqliteTable(
  "optimus_workloads",
  {
    /** The `query_log_analysis` job. */
    runId: text("run_id").notNull(),
    tableId: text("table_id").notNull(),
    submissionId: text("submission_id").notNull(),
    tableFqn: text("table_fqn").notNull(),
    queries: integer("queries").notNull(),
    bytesScanned: real("bytes_scanned").notNull(),
    filterSets: text("filter_sets", { mode: "json" }).notNull().$type<OptimusFilterSet[]>(),
    other: text("other", { mode: "json" }).notNull().$type<OptimusVolume>(),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.runId, t.tableId] }),
    index("optimus_workloads_submission_idx").on(t.submissionId),
  ],
);
export type OptimusWorkload = typeof optimusWorkloads.$inferSelect;

export const OPTIMUS_RECOMMENDATION_STATUSES = ["open", "applied", "dismissed", "reverted"] as const;
export type OptimusRecommendationStatus = (typeof OPTIMUS_RECOMMENDATION_STATUSES)[number];

/** Why a recommendation says what it says: the scoring's candidates and the workload it replayed. */
export type OptimusEvidence = {
  candidates: { layout: Layout | null; skip_fraction: number }[];
  sample_rows: number;
  pseudo_files: number;
  method: string;
  table_version: number;
  /** The workload's top filter sets (at most 20), with predicates, volume and examples. */
  filter_sets: OptimusFilterSet[];
};

/** What an apply replaced, for a revert: whether it created the table-level policy, and the action it overwrote. */
export type OptimusPreviousPolicy = { created: boolean; improve_layout: unknown | null };

/**
 * A layout a `layout_scoring` job recommended for a table (`optimus/scoring-kind.ts`), and what a
 * user did with it since (apply, dismiss, revert). One row per scoring job, however often its
 * finish runs; the API shows those of the submission's latest succeeded run.
 */
export const optimusRecommendations = sqliteTable(
  "optimus_recommendations",
  {
    id: text("id").primaryKey(),
    submissionId: text("submission_id").notNull(),
    /** The `query_log_analysis` job whose workload was scored. */
    runId: text("run_id").notNull(),
    scoringJobId: text("scoring_job_id").notNull(),
    tableId: text("table_id").notNull(),
    tableFqn: text("table_fqn").notNull(),
    layout: text("layout", { mode: "json" }).notNull().$type<Layout>(),
    currentLayout: text("current_layout", { mode: "json" }).$type<Layout>(),
    expectedSkipFraction: real("expected_skip_fraction").notNull(),
    /** The current layout simulated on the sample. */
    currentSkipFraction: real("current_skip_fraction").notNull(),
    /** The current files' statistics replayed; null where they carry none. */
    measuredSkipFraction: real("measured_skip_fraction"),
    bytesSavedPerDay: real("bytes_saved_per_day").notNull(),
    rewriteBytes: real("rewrite_bytes").notNull(),
    reason: text("reason").notNull(),
    evidence: text("evidence", { mode: "json" }).notNull().$type<OptimusEvidence>(),
    status: text("status", { enum: OPTIMUS_RECOMMENDATION_STATUSES }).notNull(),
    statusChangedAt: integer("status_changed_at", { mode: "timestamp_ms" }),
    statusChangedBy: text("status_changed_by"),
    appliedPolicyId: text("applied_policy_id"),
    previousPolicy: text("previous_policy", { mode: "json" }).$type<OptimusPreviousPolicy>(),
    createdAt: createdAt(),
  },
  (t) => [
    /** A scoring's finish applied twice inserts once. */
    uniqueIndex("optimus_recommendations_scoring_idx").on(t.scoringJobId),
    index("optimus_recommendations_run_idx").on(t.submissionId, t.runId),
    index("optimus_recommendations_table_idx").on(t.tableId),
  ],
);
export type OptimusRecommendation = typeof optimusRecommendations.$inferSelect;

/**
 * A table's workload and skipping per UTC day, as a submission's scorings measured it: one row per
 * submission, table and day, the newest measurement of the day replacing older ones.
 * `predicted_skip_fraction` is the expected skip of the table's newest open-or-applied
 * recommendation of the submission when the day was measured (null when none).
 */
export const optimusTableDays = sqliteTable(
  "optimus_table_days",
  {
    submissionId: text("submission_id").notNull(),
    tableId: text("table_id").notNull(),
    /** `YYYY-MM-DD`. */
    day: text("day").notNull(),
    tableFqn: text("table_fqn").notNull(),
    queries: integer("queries").notNull(),
    bytesScanned: real("bytes_scanned").notNull(),
    measuredSkipFraction: real("measured_skip_fraction"),
    predictedSkipFraction: real("predicted_skip_fraction"),
    runId: text("run_id").notNull(),
    measuredAt: integer("measured_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.submissionId, t.tableId, t.day] })],
);
export type OptimusTableDay = typeof optimusTableDays.$inferSelect;
