/**
 * Reads and updates the configuration resource. Values live one row per setting in `settings`;
 * a missing row means the default. An update is validated as a whole (ranges by the schema, then
 * cross-field rules on the merged result) and written in one batch, so it never applies half-way.
 *
 * Reads are served from memory for at most `cacheTtlMs`: every request reads the configuration
 * (token TTLs, the GET itself), and a database round trip per request would dominate. An update
 * on this instance replaces the cached copy at once; other replicas see it within the TTL (the
 * spec allows 60 s for TTL changes to reach new tokens).
 */
import { type Clock, systemClock } from "@lakesmith/shared";
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { settings } from "../db/schema.ts";
import { ApiError, type FieldError } from "../http/problem.ts";
import {
  type Config,
  type ConfigUpdate,
  DEFAULT_CONFIG,
  SETTING_KEYS,
  type SettingKey,
} from "./definitions.ts";

export interface StoredConfig {
  values: Config;
  updatedAt: Date | null;
}

export class ConfigService {
  private cached: { config: StoredConfig; expiresAt: number } | undefined;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock = systemClock,
    private readonly cacheTtlMs = 5_000,
  ) {}

  async get(): Promise<StoredConfig> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.expiresAt > now) return this.cached.config;
    const config = await this.load();
    this.cached = { config, expiresAt: now + this.cacheTtlMs };
    return config;
  }

  private async load(): Promise<StoredConfig> {
    const rows = await this.db.select().from(settings);
    const values: Config = { ...DEFAULT_CONFIG };
    let updatedAt: Date | null = null;
    for (const row of rows) {
      if (!(SETTING_KEYS as string[]).includes(row.key)) continue;
      (values as Record<string, unknown>)[row.key] = JSON.parse(row.value);
      if (!updatedAt || row.updatedAt > updatedAt) updatedAt = row.updatedAt;
    }
    return { values, updatedAt };
  }

  async update(patch: ConfigUpdate, updatedBy: string): Promise<StoredConfig> {
    const current = await this.load();
    const merged = { ...current.values, ...patch };
    const problems = crossFieldProblems(merged, patch);
    if (problems.length > 0) {
      throw new ApiError(422, problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems);
    }
    const keys = Object.keys(patch) as SettingKey[];
    if (keys.length > 0) {
      const now = this.clock.now();
      const statements = keys.map((key) =>
        this.db
          .insert(settings)
          .values({ key, value: JSON.stringify(patch[key]), updatedAt: now, updatedBy })
          .onConflictDoUpdate({
            target: settings.key,
            set: { value: sql`excluded.value`, updatedAt: now, updatedBy },
          }),
      );
      await this.db.batch(statements as [(typeof statements)[number], ...typeof statements]);
    }
    this.cached = undefined;
    return this.get();
  }
}

type NumericKey = { [K in SettingKey]: Config[K] extends number ? K : never }[SettingKey];

/**
 * A numeric setting's current value as a SQL expression, for statements that must read it in their
 * own transaction without a round trip first (finish hooks build their statements synchronously).
 *
 * @example db.update(t).set({ eligibleAt: sql`${now} + ${settingSql("pending_deletion_grace_hours")} * 3600000` })
 */
export function settingSql(key: NumericKey): SQL {
  return sql`coalesce((select json_extract(${settings.value}, '$') from ${settings} where ${settings.key} = ${key}), ${DEFAULT_CONFIG[key]})`;
}

/** Rules that span fields: both refresh-token TTLs must exceed the access-token TTL. */
function crossFieldProblems(merged: Config, patch: ConfigUpdate): FieldError[] {
  const problems: FieldError[] = [];
  for (const key of ["refresh_token_ttl_sso_seconds", "refresh_token_ttl_local_seconds"] as const) {
    if (merged[key] <= merged.access_token_ttl_seconds) {
      // Name the field the caller changed; if only the access TTL changed, that is the culprit.
      const path = key in patch || !("access_token_ttl_seconds" in patch) ? key : "access_token_ttl_seconds";
      problems.push({
        path,
        message: `${key} (${merged[key]}) must exceed access_token_ttl_seconds (${merged.access_token_ttl_seconds})`,
      });
    }
  }
  return problems;
}
