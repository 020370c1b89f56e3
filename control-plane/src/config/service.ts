/**
 * Reads and updates the configuration resource. Values live one row per setting in `settings`;
 * a missing row means the default. An update is validated as a whole (ranges by the schema, then
 * cross-field rules on the merged result) and written in one batch, so it never applies half-way.
 *
 * Reads are served from memory for at most `cacheTtlMs`: every request reads the configuration
 * (token TTLs, the GET itself), and a database round trip per request would dominate. An update
 * on this instance replaces the cached copy at once; other replicas see it within the TTL (the
 * spec allows 60 s for TTL changes to reach new tokens).
 *
 * Secret settings (`secret: true`) are stored encrypted, the whole JSON value under the setting's
 * name. `values` holds them decrypted for the server's own use; responses mask them
 * (`maskedValues`), and an update resolves masks sent back to the stored values first.
 */
import { type Clock, systemClock } from "@lakesmith/shared";
import { type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { settings } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import { ApiError, type FieldError } from "../http/problem.ts";
import type { Keyring } from "../secrets/keyring.ts";
import { maskValue, unmaskValue } from "../secrets/mask.ts";
import { settingAad } from "../secrets/stored.ts";
import {
  type Config,
  type ConfigUpdate,
  DEFAULT_CONFIG,
  isSecretSetting,
  SECRET_SETTING_KEYS,
  SETTING_KEYS,
  type SecretSettingKey,
  type SettingKey,
} from "./definitions.ts";

export interface StoredConfig {
  /** Every setting, secrets decrypted: for the server's own use, never for a response. */
  values: Config;
  updatedAt: Date | null;
}

/** `values` as responses show them: every secret setting masked. */
export function maskedValues(values: Config): Config {
  const masked = { ...values };
  for (const key of SECRET_SETTING_KEYS) (masked as Record<string, unknown>)[key] = maskValue(values[key]);
  return masked;
}

export class ConfigService {
  private cached: { config: StoredConfig; expiresAt: number } | undefined;
  private readonly rows;

  constructor(
    private readonly db: Db,
    private readonly secrets: Keyring,
    private readonly clock: Clock = systemClock,
    private readonly cacheTtlMs = 5_000,
  ) {
    this.rows = preparedSelect(db, db.select().from(settings));
  }

  async get(): Promise<StoredConfig> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.expiresAt > now) return this.cached.config;
    const config = await this.load();
    this.cached = { config, expiresAt: now + this.cacheTtlMs };
    return config;
  }

  private async load(): Promise<StoredConfig> {
    const rows = await this.rows.all();
    const values: Config = { ...DEFAULT_CONFIG };
    let updatedAt: Date | null = null;
    for (const row of rows) {
      if (!(SETTING_KEYS as string[]).includes(row.key)) continue;
      const text = isSecretSetting(row.key)
        ? await this.secrets.decrypt(row.value, settingAad(row.key))
        : row.value;
      (values as Record<string, unknown>)[row.key] = JSON.parse(text);
      if (!updatedAt || row.updatedAt > updatedAt) updatedAt = row.updatedAt;
    }
    return { values, updatedAt };
  }

  async update(sent: ConfigUpdate, updatedBy: string): Promise<StoredConfig> {
    const current = await this.load();
    const { patch, problems: maskProblems } = unmaskSecrets(sent, current.values);
    const merged = { ...current.values, ...patch };
    const problems = [...maskProblems, ...crossFieldProblems(merged, patch)];
    if (problems.length > 0) {
      throw new ApiError(422, problems.map((p) => `${p.path}: ${p.message}`).join("; "), problems);
    }
    const keys = Object.keys(patch) as SettingKey[];
    if (keys.length > 0) {
      const now = this.clock.now();
      const rows = await Promise.all(
        keys.map(async (key) => {
          const json = JSON.stringify(patch[key]);
          return {
            key,
            value: isSecretSetting(key) ? await this.secrets.encrypt(json, settingAad(key)) : json,
          };
        }),
      );
      const statements = rows.map(({ key, value }) =>
        this.db
          .insert(settings)
          .values({ key, value, updatedAt: now, updatedBy })
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

/** Numeric settings that are not secret: a secret's stored value is an envelope, not JSON. */
type NumericKey = Exclude<
  { [K in SettingKey]: Config[K] extends number ? K : never }[SettingKey],
  SecretSettingKey
>;

/**
 * A numeric setting's current value as a SQL expression, for statements that must read it in their
 * own transaction without a round trip first (finish hooks build their statements synchronously).
 *
 * @example db.update(t).set({ eligibleAt: sql`${now} + ${settingSql("pending_deletion_grace_hours")} * 3600000` })
 */
export function settingSql(key: NumericKey): SQL {
  return sql`coalesce((select json_extract(${settings.value}, '$') from ${settings} where ${settings.key} = ${key}), ${DEFAULT_CONFIG[key]})`;
}

/**
 * The update with every masked secret resolved to the stored value it stands for (`secrets/mask.ts`).
 * A secret sent back unchanged is dropped from the update, so its row is not rewritten.
 */
function unmaskSecrets(sent: ConfigUpdate, stored: Config): { patch: ConfigUpdate; problems: FieldError[] } {
  const patch: Record<string, unknown> = { ...sent };
  const problems: FieldError[] = [];
  for (const key of SECRET_SETTING_KEYS) {
    const value = sent[key];
    if (value === undefined) continue;
    const resolved = unmaskValue(value, stored[key], key);
    if ("problems" in resolved) problems.push(...resolved.problems);
    else if (JSON.stringify(resolved.value) === JSON.stringify(stored[key])) delete patch[key];
    else patch[key] = resolved.value;
  }
  return { patch: patch as ConfigUpdate, problems };
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
