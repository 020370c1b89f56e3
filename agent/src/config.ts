/**
 * The agent's configuration, parsed once by one zod schema from four layers, highest first:
 * command-line flags, environment variables, a JSON config file (`--config FILE`), defaults.
 * A key set in a higher layer replaces the lower ones whole (lists are not merged).
 *
 * Every option is one row of `OPTIONS`: its flag, variable and file key are derived from the same
 * name, so the README table, `--help` and the parser can't disagree.
 */
import { readFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { endpointKey } from "@lakesmith/shared/locations";
import { z } from "zod";
import { AllowList, LocationError, parseLocation } from "./allow.ts";

type Kind = "string" | "int" | "bool" | "list";

interface Option {
  /** snake_case key of the config file; the flag is its kebab-case form. */
  key: string;
  kind: Kind;
  env: string;
  description: string;
}

const opt = (key: string, kind: Kind, description: string, env?: string): Option => ({
  key,
  kind,
  description,
  env: env ?? `LAKESMITH_AGENT_${key.toUpperCase()}`,
});

export const OPTIONS: readonly Option[] = [
  opt(
    "control_plane",
    "string",
    "Control plane base URL (http, https, ws or wss)",
    "LAKESMITH_CONTROL_PLANE",
  ),
  opt("token", "string", "Agent token (sent as a bearer credential, never logged)", "LAKESMITH_AGENT_TOKEN"),
  opt("concurrency", "int", "Jobs run at once (announced as capacity)"),
  opt("scratch", "string", "Folder for per-job scratch space"),
  opt("allow", "list", "Storage URI prefix the agent may touch (repeatable; env: comma-separated)"),
  opt(
    "allow_endpoints",
    "list",
    "Catalog or metastore endpoint the agent may reach, e.g. https://uc.example.com or thrift://hms:9083 (repeatable; env: comma-separated)",
  ),
  opt("capabilities", "list", "Extra capabilities to announce beyond the allowed schemes"),
  opt("name", "string", "Name of this agent process in its logs"),
  opt("metrics_port", "int", "Serve Prometheus metrics on this port (0 picks one; unset: off)"),
  opt("metrics_host", "string", "Address the metrics server listens on"),
  opt("log_level", "string", "pino log level"),
  opt("drain_timeout_ms", "int", "On SIGTERM, how long running jobs may finish before they are released"),
  opt("reconnect_base_ms", "int", "First reconnect delay bound (jittered exponential backoff)"),
  opt("reconnect_max_ms", "int", "Largest reconnect delay bound"),
  opt("s3_region", "string", "Region of s3:// stores (default: the AWS SDK's chain, e.g. AWS_REGION)"),
  opt("s3_endpoint", "string", "Endpoint of an S3-compatible store, e.g. http://127.0.0.1:9000"),
  opt(
    "s3_force_path_style",
    "bool",
    "Address buckets as http://host/bucket (most S3-compatible stores want it)",
  ),
  opt(
    "s3_max_attempts",
    "int",
    "Attempts per object-store request or read, the first included (5xx, throttling, network errors, stalls)",
  ),
  opt("s3_retry_base_ms", "int", "First object-store retry delay bound (jittered exponential backoff)"),
  opt("s3_retry_max_ms", "int", "Largest object-store retry delay bound"),
  opt(
    "s3_stall_timeout_ms",
    "int",
    "An object-store request or read that sends no byte for this long is abandoned and retried",
  ),
  opt(
    "gcs_endpoint",
    "string",
    "Endpoint of gs:// stores, Google Cloud Storage's XML API (default https://storage.googleapis.com)",
  ),
  opt("gcs_hmac_access_id", "string", "Access ID of a service account's HMAC key, for gs:// stores"),
  opt("gcs_hmac_secret", "string", "Secret of that HMAC key (never logged or printed)"),
  opt(
    "azure_endpoint",
    "string",
    "Blob service URL of azure:// stores instead of https://<account>.blob.core.windows.net, e.g. Azurite's http://127.0.0.1:10000/devstoreaccount1",
  ),
  opt(
    "azure_connection_string",
    "string",
    "Connection string of the storage account of azure:// stores (never logged or printed)",
  ),
  opt(
    "azure_account_key",
    "string",
    "Key of the storage account of azure:// stores (never logged or printed)",
  ),
  opt(
    "azure_sas_token",
    "string",
    "SAS token for azure:// stores, account or container scoped (never logged or printed)",
  ),
  opt("memory_limit_mb", "int", "DuckDB memory per running job; larger work spills to the scratch folder"),
];

/** Options whose values are credentials: hidden by `redactedConfig`. */
const SECRETS = [
  "token",
  "gcs_hmac_secret",
  "azure_connection_string",
  "azure_account_key",
  "azure_sas_token",
];

/** A whole number in range; flags and variables arrive as text and are converted before this. */
const int = (min: number, max: number) =>
  z.number({ error: "must be a whole number" }).int("must be a whole number").min(min).max(max);

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const ConfigSchema = z
  .object({
    control_plane: z
      .url({
        protocol: /^(http|https|ws|wss)$/,
        error: (issue) => (issue.input === undefined ? "is required" : "must be an http(s) or ws(s) URL"),
      })
      .transform((u) => u.replace(/\/+$/, "")),
    token: z.string({ error: "is required" }).min(1, "is required"),
    concurrency: int(1, 1000).default(2),
    scratch: z
      .string()
      .min(1)
      .default(join(tmpdir(), "lakesmith-agent"))
      .transform((p) => resolve(p)),
    allow: z.array(z.string().min(1)).max(1000).default([]),
    allow_endpoints: z.array(z.string().min(1)).max(100).default([]),
    capabilities: z
      .array(z.string().regex(/^[a-z][a-z0-9_.-]{0,63}$/, "must be a lower-case name"))
      .max(100)
      .default([]),
    name: z.string().min(1).max(128).default(hostname()),
    metrics_port: int(0, 65_535).optional(),
    metrics_host: z.string().min(1).default("0.0.0.0"),
    log_level: z.enum(LOG_LEVELS).default("info"),
    drain_timeout_ms: int(0, 86_400_000).default(60_000),
    reconnect_base_ms: int(1, 60_000).default(200),
    reconnect_max_ms: int(1, 600_000).default(15_000),
    s3_region: z.string().min(1).optional(),
    s3_endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    s3_force_path_style: z.boolean({ error: "must be true or false" }).default(false),
    s3_max_attempts: int(1, 100).default(5),
    s3_retry_base_ms: int(1, 60_000).default(100),
    s3_retry_max_ms: int(1, 600_000).default(20_000),
    s3_stall_timeout_ms: int(100, 3_600_000).default(30_000),
    gcs_endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    gcs_hmac_access_id: z.string().min(1).optional(),
    gcs_hmac_secret: z.string().min(1).optional(),
    azure_endpoint: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    azure_connection_string: z.string().min(1).optional(),
    azure_account_key: z.string().min(1).optional(),
    azure_sas_token: z.string().min(1).optional(),
    memory_limit_mb: int(64, 1_048_576).default(768),
  })
  .superRefine((config, ctx) => {
    try {
      new AllowList(config.allow);
    } catch (err) {
      if (!(err instanceof LocationError)) throw err;
      ctx.addIssue({ code: "custom", path: ["allow"], message: err.message });
    }
    for (const endpoint of config.allow_endpoints) {
      try {
        endpointKey(endpoint);
      } catch (err) {
        if (!(err instanceof LocationError)) throw err;
        ctx.addIssue({ code: "custom", path: ["allow_endpoints"], message: err.message });
      }
    }
    if (config.reconnect_max_ms < config.reconnect_base_ms)
      ctx.addIssue({ code: "custom", path: ["reconnect_max_ms"], message: "must be >= reconnect_base_ms" });
    if (config.s3_retry_max_ms < config.s3_retry_base_ms)
      ctx.addIssue({ code: "custom", path: ["s3_retry_max_ms"], message: "must be >= s3_retry_base_ms" });
    if ((config.gcs_hmac_access_id === undefined) !== (config.gcs_hmac_secret === undefined))
      ctx.addIssue({
        code: "custom",
        path: [config.gcs_hmac_secret === undefined ? "gcs_hmac_secret" : "gcs_hmac_access_id"],
        message: "is required with the other half of the HMAC key",
      });
    const azure = (["azure_connection_string", "azure_account_key", "azure_sas_token"] as const).filter(
      (key) => config[key] !== undefined,
    );
    if (azure.length > 1)
      ctx.addIssue({
        code: "custom",
        path: [azure[1] as string],
        message: `is one Azure credential too many: give one of ${azure.join(", ")}`,
      });
    // A store the agent announces but could not open would take jobs only to fail them.
    const schemes = allowedSchemes(config.allow);
    if (schemes.has("gs") && config.gcs_hmac_access_id === undefined)
      ctx.addIssue({
        code: "custom",
        path: ["allow"],
        message:
          "names gs:// locations, which need an HMAC key: set LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID and LAKESMITH_AGENT_GCS_HMAC_SECRET",
      });
    if (schemes.has("azure") && azure.length === 0)
      ctx.addIssue({
        code: "custom",
        path: ["allow"],
        message:
          "names azure:// locations, which need a credential: set LAKESMITH_AGENT_AZURE_CONNECTION_STRING, LAKESMITH_AGENT_AZURE_ACCOUNT_KEY or LAKESMITH_AGENT_AZURE_SAS_TOKEN",
      });
  });

export type AgentConfig = z.infer<typeof ConfigSchema>;

/** The schemes of the allowed prefixes that parse (the others are reported on their own). */
function allowedSchemes(allow: readonly string[]): Set<string> {
  const schemes = new Set<string>();
  for (const prefix of allow) {
    try {
      schemes.add(parseLocation(prefix).scheme);
    } catch (err) {
      if (!(err instanceof LocationError)) throw err;
    }
  }
  return schemes;
}
/** What callers (tests, embedders) pass: defaults may be left out. */
export type AgentConfigInput = z.input<typeof ConfigSchema>;

/** A configuration the agent can't start with; `message` lists every problem, one a line. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Validates an in-process configuration (tests, embedders); throws `ConfigError`. */
export function parseConfig(input: AgentConfigInput): AgentConfig {
  const result = ConfigSchema.safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(describeIssues(result.error.issues, () => "config"));
}

export type CliCommand =
  | { command: "run"; config: AgentConfig; configFile?: string }
  | { command: "help" }
  | { command: "print-config"; config: AgentConfig };

const flagOf = (key: string) => key.replaceAll("_", "-");

/**
 * Resolves the configuration of one CLI invocation. Throws `ConfigError` for anything wrong: an
 * unknown flag, an unreadable config file, a value out of range. Each message names where the value
 * came from (`--concurrency`, `LAKESMITH_AGENT_CONCURRENCY` or the file's key).
 *
 * @example loadCliConfig(["--control-plane", "http://cp:8787", "--allow", "file:///lake"], process.env)
 */
export function loadCliConfig(argv: readonly string[], env: Record<string, string | undefined>): CliCommand {
  const options: Record<string, { type: "string" | "boolean"; multiple?: boolean }> = {
    config: { type: "string" },
    help: { type: "boolean" },
    "print-config": { type: "boolean" },
  };
  for (const o of OPTIONS) options[flagOf(o.key)] = { type: "string", multiple: o.kind === "list" };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (err) {
    throw new ConfigError(`${(err as Error).message}\nRun lakesmith-agent --help for the options.`);
  }
  const flags = parsed.values as Record<string, string | string[] | boolean | undefined>;
  if (flags.help) return { command: "help" };

  const configFile = (flags.config as string | undefined) ?? nonEmpty(env.LAKESMITH_AGENT_CONFIG);
  const file = configFile ? readConfigFile(configFile) : {};

  const raw: Record<string, unknown> = {};
  const source = new Map<string, string>();
  for (const o of OPTIONS) {
    const flag = flags[flagOf(o.key)];
    const fromEnv = nonEmpty(env[o.env]);
    if (flag !== undefined) {
      raw[o.key] = coerce(o.kind, flag);
      source.set(o.key, `--${flagOf(o.key)}`);
    } else if (fromEnv !== undefined) {
      raw[o.key] = coerce(o.kind, o.kind === "list" ? fromEnv.split(",") : fromEnv);
      source.set(o.key, o.env);
    } else if (o.key in file) {
      raw[o.key] = o.kind === "list" && typeof file[o.key] === "string" ? [file[o.key]] : file[o.key];
      source.set(o.key, `${configFile}: ${o.key}`);
    }
  }
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const where = (key: string) => {
      const o = OPTIONS.find((x) => x.key === key);
      return source.get(key) ?? (o ? `--${flagOf(o.key)} (or ${o.env})` : key);
    };
    throw new ConfigError(describeIssues(result.error.issues, where));
  }
  if (flags["print-config"]) return { command: "print-config", config: result.data };
  return configFile
    ? { command: "run", config: result.data, configFile }
    : { command: "run", config: result.data };
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`config file ${path}: ${(err as NodeJS.ErrnoException).code ?? "unreadable"}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new ConfigError(`config file ${path} must hold one JSON object`);
  const known = new Set(OPTIONS.map((o) => o.key));
  const unknown = Object.keys(json).filter((k) => !known.has(k));
  if (unknown.length)
    throw new ConfigError(
      `config file ${path}: unknown key${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; ` +
        `the keys are ${[...known].join(", ")}`,
    );
  return json as Record<string, unknown>;
}

/** Flags and variables are text; ints become numbers here so the schema sees one type. */
function coerce(kind: Kind, value: string | string[] | boolean): unknown {
  if (kind === "list")
    return (Array.isArray(value) ? value : [String(value)]).map((v) => v.trim()).filter(Boolean);
  const text = String(value).trim();
  if (kind === "int") return /^-?\d+$/.test(text) ? Number(text) : text;
  if (kind === "bool")
    return text === "true" || text === "1" ? true : text === "false" || text === "0" ? false : text;
  return text;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function describeIssues(issues: readonly z.core.$ZodIssue[], where: (key: string) => string): string {
  const lines = issues.map((issue) => {
    const [key, ...rest] = issue.path.map(String);
    const label = key ? `${where(key)}${rest.length ? `[${rest.join(".")}]` : ""}` : "config";
    return `  ${label}: ${issue.message}`;
  });
  return `Invalid agent configuration:\n${lines.join("\n")}`;
}

/** `--help` text, generated from `OPTIONS`. */
export function usage(): string {
  const rows = OPTIONS.map(
    (o) =>
      `${`  --${flagOf(o.key)} <${o.kind === "int" ? "n" : o.kind === "bool" ? "true|false" : "value"}>`.padEnd(30)}${o.description} [${o.env}]`,
  );
  return [
    "Usage: lakesmith-agent --control-plane URL --token TOKEN [options]",
    "",
    "Options (flags override environment variables, which override the --config file):",
    `${`  --config <file>`.padEnd(30)}JSON file with the snake_case keys below [LAKESMITH_AGENT_CONFIG]`,
    ...rows,
    `${`  --print-config`.padEnd(30)}Print the resolved configuration (credentials hidden) and exit`,
    `${`  --help`.padEnd(30)}Show this text`,
  ].join("\n");
}

/** The configuration as it may be shown: the token and other credentials replaced. */
export function redactedConfig(config: AgentConfig): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...config };
  for (const key of SECRETS) if (shown[key] !== undefined) shown[key] = "<redacted>";
  return shown;
}
