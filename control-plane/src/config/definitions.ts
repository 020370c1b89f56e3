/**
 * Every setting of the configuration resource (`GET/PUT/POST /api/v1/config`): the platform settings
 * of document 2 and the customer configuration, as flat snake_case fields with the unit in the name.
 * Each has a zod schema (its range), a default and a description; the OpenAPI document, validation
 * and `setting_definitions` in the GET response are all generated from this table.
 *
 * A setting with `secret: true` is stored encrypted (`secrets/keyring.ts`) and masked on the wire for
 * everyone (`secrets/mask.ts`); its values are text or lists of text, never numbers.
 */
import { z } from "@hono/zod-openapi";

interface Definition<S extends z.ZodType> {
  schema: S;
  default: z.infer<S>;
  unit?: string;
  description: string;
  /** Stored encrypted, masked in every response; see `SECRET_DESCRIPTION`. */
  secret?: true;
}

const def = <S extends z.ZodType>(d: Definition<S>) => d;
const emailList = z.array(z.email().max(254)).max(100);

/** Appended to a secret setting's description in the OpenAPI document. */
const SECRET_DESCRIPTION =
  "Secret: stored encrypted and returned masked to everyone, Admins included. A URL keeps its scheme and host, then `••••` and, when the rest of the URL is at least 16 characters, its last 4 (`https://hooks.slack.com/••••x9Zq`). On update, a value (or list element) equal to the mask of a stored value keeps that stored value, so a list read from GET can be sent back with elements removed, reordered or added; a value containing `••••` that matches no stored value is refused with 422; anything else replaces.";

export const SETTINGS = {
  min_eligible_table_size_gb: def({
    schema: z.number().min(0).max(1_000_000),
    default: 0.1,
    unit: "GB",
    description:
      "Tables smaller than this (GB of 2^30 bytes) are not synced from a catalog; a table whose size the agent can't tell is synced. A sync takes the value it has when the sync is queued.",
  }),
  min_discovery_prefix_size_mb: def({
    schema: z.number().min(0).max(1_000_000),
    default: 1,
    unit: "MB",
    description:
      "Discovery leaves out prefixes whose data files (JSON, gzip too) hold fewer than this many MB (of 2^20 bytes): too small to be worth converting. A discovery takes the value it has when it is queued.",
  }),
  quarterly_goal_pb: def({
    schema: z.number().min(0).max(1_000_000),
    default: 0,
    unit: "PB",
    description: "Quarterly storage-savings goal; 0 hides the goal metric.",
  }),
  storage_cost_usd_per_gb_month: def({
    schema: z.number().min(0.001).max(1),
    default: 0.021,
    unit: "USD per GB per month",
    description: "Base storage rate.",
  }),
  cloud_discount_percent: def({
    schema: z.number().min(0).max(90),
    default: 0,
    unit: "percent",
    description: "Effective rate = base rate x (1 - discount percent / 100).",
  }),
  projection_period_months: def({
    schema: z.number().int().min(1).max(60).nullable(),
    default: null,
    unit: "months",
    description: "Months projected forward in the savings report; null when unset.",
  }),
  operational_cost_usd_per_pb: def({
    schema: z.number().min(0).max(100_000).nullable(),
    default: null,
    unit: "USD per PB",
    description: "Heuristic processing cost; null when unset.",
  }),
  hourly_fanout_min_partition_size_gb: def({
    schema: z.number().min(10).max(1000).nullable(),
    default: null,
    unit: "GB",
    description:
      "Above this average daily partition size a table is split into 24 per-hour jobs instead of one daily job; null disables hourly fan-out.",
  }),
  mutation_interval_threshold_minutes: def({
    schema: z.number().int().min(5).max(120).nullable(),
    default: null,
    unit: "minutes",
    description:
      "Minimum write-free period required to route a table to a full crunch instead of a lighter optimize pass; null when unset.",
  }),
  access_token_ttl_seconds: def({
    schema: z.number().int().min(900).max(28_800),
    default: 3600,
    unit: "seconds",
    description: "Lifetime of an access token.",
  }),
  refresh_token_ttl_sso_seconds: def({
    schema: z.number().int().min(3600).max(28_800),
    default: 7200,
    unit: "seconds",
    description: "Lifetime of a refresh token of an SSO user; must exceed access_token_ttl_seconds.",
  }),
  refresh_token_ttl_local_seconds: def({
    schema: z.number().int().min(3600).max(2_592_000),
    default: 604_800,
    unit: "seconds",
    description: "Lifetime of a refresh token of a password user; must exceed access_token_ttl_seconds.",
  }),
  sso_enforced: def({
    schema: z.boolean(),
    default: false,
    description:
      "When true, password logins and refreshes are refused (403) for every password user but the break-glass account (the protected `breakglass` Admin created at first start), so users sign in through the configured OIDC or SAML provider. The break-glass account keeps its password for when the provider is unreachable.",
  }),
  console_public_url: def({
    schema: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .nullable(),
    default: null,
    description:
      "Pins the absolute URLs the console emits; null means the request origin. Single sign-on builds its callback, SAML ACS and metadata addresses and the post-login redirect (`/login/sso`) on it, so set it when the API is reached through a proxy.",
  }),
  email_theme: def({
    schema: z.enum(["Dark", "Light"]),
    default: "Light",
    description: "Theme of email reports.",
  }),
  daily_report_recipients: def({
    schema: emailList,
    default: [],
    description: "Recipients of the daily report; empty means all Editor and Admin users.",
  }),
  weekly_report_recipients: def({
    schema: emailList,
    default: [],
    description: "Recipients of the weekly report; empty means all users of any role.",
  }),
  report_daily_time_utc: def({
    schema: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, "HH:MM, 24-hour, UTC"),
    default: "08:00",
    description:
      "When the daily report is sent (HH:MM, UTC); the weekly report goes at the same time on report_weekly_day. A report covers the 24 hours (7 days) before this time, and each period is sent once.",
  }),
  report_weekly_day: def({
    schema: z.enum(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
    default: "Monday",
    description: "UTC weekday the weekly report is sent on, at report_daily_time_utc.",
  }),
  customer_name: def({
    schema: z.string().max(200),
    default: "",
    description: "Name of the customer this installation belongs to.",
  }),
  notification_emails: def({
    schema: emailList,
    default: [],
    description: "Addresses that receive job failure and safety notifications.",
  }),
  chat_webhook_urls: def({
    schema: z.array(z.url({ protocol: /^https?$/ }).max(2048)).max(20),
    default: [],
    description: "Chat webhooks (Slack, Teams, ...) that receive notifications.",
    secret: true,
  }),
  min_qualifying_table_size_gb: def({
    schema: z.number().min(0).max(1_000_000),
    default: 0.1,
    unit: "GB",
    description:
      "A managed table smaller than this (GB of 2^30 bytes, as its catalog's latest sync states) qualifies for nothing yet: it stays managed and waits, saying why. A table whose catalog states no size qualifies.",
  }),
  policy_engine_paused: def({
    schema: z.boolean(),
    default: false,
    description:
      "The policy engine's global emergency stop: while true, no policy queues a run (ad-hoc actions and jobs already running are not affected) and every managed table shows it. Each catalog has its own stop too (PUT /api/v1/catalogs/{catalog_id}/policy-stop).",
  }),
  min_existence_days: def({
    schema: z.number().int().min(0).max(3650),
    default: 7,
    unit: "days",
    description:
      "A managed table must exist at least this long (since its catalog says it was created, else since a sync first reported it) to qualify for optimization; until then it waits, saying why.",
  }),
  schedules_per_slot: def({
    schema: z.number().int().min(1).max(100_000),
    default: 100,
    unit: "schedules",
    description:
      "Capacity of one run_time_utc slot (HH:MM): how many enabled daily schedules may run at the same minute. GET /api/v1/slots/{run_time_utc} reports what is left; a schedule that would exceed it is refused with 409.",
  }),
  default_partition_expiration_days: def({
    schema: z.number().int().min(1).max(36_500),
    default: 30,
    unit: "days",
    description: "Default partition expiration of new policies.",
  }),
  pending_deletion_grace_hours: def({
    schema: z.number().int().min(0).max(8760),
    default: 24,
    unit: "hours",
    description:
      "How long a pending deletion stays recoverable at least: hard-delete picks a vacuum's record this long after the vacuum ended, and an expired partition's record this long after the expiration ended or once the table's own retention has passed since the commit, whichever is later. Applies to records created after a change.",
  }),
  login_failures_per_client: def({
    schema: z.number().int().min(1).max(10_000),
    default: 20,
    unit: "failed logins",
    description:
      "Failed logins from one client address, for any accounts, before POST /api/v1/auth/login answers that client 429 for a while (see login_lockout_max_seconds). Single sign-on callbacks and code exchanges count too, each protocol step as one account (docs/sso.md). A successful login from the client clears its count.",
  }),
  login_failures_per_account: def({
    schema: z.number().int().min(1).max(1000),
    default: 5,
    unit: "failed logins",
    description:
      "Failed logins for one account from one client address before that client gets 429 for that account for a while. Counted per client, so failures elsewhere never lock an account out for anyone else.",
  }),
  login_lockout_max_seconds: def({
    schema: z.number().int().min(1).max(900),
    default: 300,
    unit: "seconds",
    description:
      "Longest 429 period of the login throttle: the first lasts 1 s and each further failure doubles it, up to this.",
  }),
  login_failure_window_seconds: def({
    schema: z.number().int().min(60).max(86_400),
    default: 900,
    unit: "seconds",
    description:
      "Failed logins are forgotten this long after the last one (or after the 429 period it started, if later).",
  }),
} as const;

export type SettingKey = keyof typeof SETTINGS;
export type Config = { [K in SettingKey]: z.infer<(typeof SETTINGS)[K]["schema"]> };
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

export type SecretSettingKey = {
  [K in SettingKey]: (typeof SETTINGS)[K] extends { secret: true } ? K : never;
}[SettingKey];
export const SECRET_SETTING_KEYS = SETTING_KEYS.filter(
  (k) => "secret" in SETTINGS[k] && SETTINGS[k].secret,
) as SecretSettingKey[];

export function isSecretSetting(key: string): key is SecretSettingKey {
  return (SECRET_SETTING_KEYS as string[]).includes(key);
}

export const DEFAULT_CONFIG = Object.fromEntries(SETTING_KEYS.map((k) => [k, SETTINGS[k].default])) as Config;

function withDoc<K extends SettingKey>(key: K) {
  const d = SETTINGS[key];
  const unit = "unit" in d && d.unit ? ` Unit: ${d.unit}.` : "";
  const secret = isSecretSetting(key) ? ` ${SECRET_DESCRIPTION}` : "";
  return (d.schema as z.ZodType).openapi({
    description: `${d.description}${unit}${secret}`,
    default: d.default,
  });
}

const valueShape = Object.fromEntries(SETTING_KEYS.map((k) => [k, withDoc(k)])) as {
  [K in SettingKey]: (typeof SETTINGS)[K]["schema"];
};

const SettingDefinitionSchema = z
  .object({
    default: z.any(),
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    unit: z.string().optional(),
    nullable: z.boolean(),
    secret: z.boolean().openapi({ description: "Stored encrypted and masked in every response." }),
  })
  .openapi("SettingDefinition", { description: "Each setting's meaning is in its field description above." });

export const ConfigSchema = z
  .object({
    ...valueShape,
    updated_at: z.string().nullable().openapi({ description: "When a setting last changed; null if never." }),
    setting_definitions: z
      .record(z.string(), SettingDefinitionSchema)
      .openapi({ description: "Default, range and unit of every setting, keyed by field name." }),
  })
  .openapi("Configuration");

/** Partial update: any subset of settings; unknown fields are rejected so typos are not lost. */
export const ConfigUpdateSchema = z.strictObject(valueShape).partial().openapi("CustomerConfigUpdate");
export type ConfigUpdate = z.infer<typeof ConfigUpdateSchema>;

/** Default, range and unit of every setting, read off the zod schemas so they cannot drift. */
export const SETTING_DEFINITIONS = Object.fromEntries(
  SETTING_KEYS.map((key) => {
    const d = SETTINGS[key];
    const json = z.toJSONSchema(d.schema as z.ZodType, { unrepresentable: "any" }) as Record<string, unknown>;
    const numeric = (json.anyOf as Record<string, unknown>[] | undefined)?.[0] ?? json;
    return [
      key,
      {
        default: d.default,
        ...(typeof numeric.minimum === "number" ? { minimum: numeric.minimum } : {}),
        ...(typeof numeric.maximum === "number" ? { maximum: numeric.maximum } : {}),
        ...("unit" in d && d.unit ? { unit: d.unit } : {}),
        nullable: (d.schema as z.ZodType).safeParse(null).success,
        secret: isSecretSetting(key),
      },
    ];
  }),
);
