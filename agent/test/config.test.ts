import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, loadCliConfig, redactedConfig } from "../src/config.ts";

const base = ["--control-plane", "http://cp:8787/", "--token", "lsa_flag"];

const root = mkdtempSync(join(tmpdir(), "agent-config-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function configFile(content: unknown): string {
  const dir = mkdtempSync(join(root, "case-"));
  const path = join(dir, "agent.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

function run(argv: string[], env: Record<string, string> = {}) {
  const command = loadCliConfig(argv, env);
  if (command.command !== "run") throw new Error(`expected run, got ${command.command}`);
  return command.config;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("agent configuration", () => {
  it("applies defaults and trims the control plane URL", () => {
    const config = run(base);
    expect(config.control_plane).toBe("http://cp:8787");
    expect(config.token).toBe("lsa_flag");
    expect(config.concurrency).toBe(2);
    expect(config.allow).toEqual([]);
    expect(config.metrics_port).toBeUndefined();
  });

  it("reads every option from the environment, the allow list comma-separated", () => {
    const config = run([], {
      LAKESMITH_CONTROL_PLANE: "https://plane.example",
      LAKESMITH_AGENT_TOKEN: "lsa_env",
      LAKESMITH_AGENT_CONCURRENCY: "8",
      LAKESMITH_AGENT_ALLOW: "file:///lake, s3://bucket/raw",
      LAKESMITH_AGENT_METRICS_PORT: "9464",
      LAKESMITH_AGENT_SCRATCH: "/var/tmp/scratch",
    });
    expect(config).toMatchObject({
      control_plane: "https://plane.example",
      token: "lsa_env",
      concurrency: 8,
      allow: ["file:///lake", "s3://bucket/raw"],
      metrics_port: 9464,
      scratch: "/var/tmp/scratch",
    });
  });

  it("ranks flags over environment over config file over defaults", () => {
    const file = configFile({
      control_plane: "http://file:1",
      token: "lsa_file",
      concurrency: 3,
      scratch: "/from/file",
      allow: "file:///from-file",
    });
    const config = run(
      ["--config", file, "--concurrency", "5", "--allow", "file:///a", "--allow", "file:///b"],
      {
        LAKESMITH_AGENT_TOKEN: "lsa_env",
        LAKESMITH_AGENT_CONCURRENCY: "4",
        LAKESMITH_AGENT_ALLOW: "file:///from-env",
      },
    );
    expect(config.control_plane).toBe("http://file:1");
    expect(config.token).toBe("lsa_env");
    expect(config.concurrency).toBe(5);
    expect(config.scratch).toBe("/from/file");
    expect(config.allow).toEqual(["file:///a", "file:///b"]);
    expect(config.drain_timeout_ms).toBe(60_000);
  });

  it("finds the config file through LAKESMITH_AGENT_CONFIG", () => {
    const file = configFile({ control_plane: "http://file:1", token: "lsa_file" });
    expect(run([], { LAKESMITH_AGENT_CONFIG: file }).token).toBe("lsa_file");
  });

  it("reads the S3 and engine options from flags, environment and file, booleans as true/false", () => {
    const fromFlags = run([
      ...base,
      "--s3-endpoint",
      "http://127.0.0.1:9000",
      "--s3-force-path-style",
      "true",
    ]);
    expect(fromFlags.s3_endpoint).toBe("http://127.0.0.1:9000");
    expect(fromFlags.s3_force_path_style).toBe(true);
    expect(fromFlags.memory_limit_mb).toBe(768);
    const fromEnv = run(base, {
      LAKESMITH_AGENT_S3_REGION: "eu-west-1",
      LAKESMITH_AGENT_S3_FORCE_PATH_STYLE: "0",
      LAKESMITH_AGENT_MEMORY_LIMIT_MB: "1024",
    });
    expect(fromEnv).toMatchObject({
      s3_region: "eu-west-1",
      s3_force_path_style: false,
      memory_limit_mb: 1024,
    });
    const fromFile = run([...base, "--config", configFile({ s3_force_path_style: true })]);
    expect(fromFile.s3_force_path_style).toBe(true);
    expect(errorOf(() => run([...base, "--s3-force-path-style", "yes"]))).toContain(
      "--s3-force-path-style: must be true or false",
    );
    expect(errorOf(() => run([...base, "--s3-endpoint", "ftp://x"]))).toContain(
      "--s3-endpoint: must be an http(s) URL",
    );
  });

  it("names each missing or bad value by where it came from", () => {
    const message = errorOf(() =>
      loadCliConfig(["--concurrency", "zero"], { LAKESMITH_AGENT_METRICS_PORT: "70000" }),
    );
    expect(message).toContain("--control-plane (or LAKESMITH_CONTROL_PLANE): is required");
    expect(message).toContain("--token (or LAKESMITH_AGENT_TOKEN): is required");
    expect(message).toContain("--concurrency: must be a whole number");
    expect(message).toContain("LAKESMITH_AGENT_METRICS_PORT:");
  });

  it("rejects a control plane URL that is not http(s) or ws(s)", () => {
    expect(errorOf(() => run(["--control-plane", "ftp://cp", "--token", "t"]))).toContain(
      "must be an http(s) or ws(s) URL",
    );
  });

  it("rejects an allow prefix it cannot read with the reason", () => {
    expect(errorOf(() => run([...base, "--allow", "hdfs://namenode/x"]))).toContain(
      "allow prefix 'hdfs://namenode/x' uses the scheme 'hdfs'",
    );
    expect(errorOf(() => run([...base, "--allow", "relative/dir"]))).toContain("allow prefix 'relative/dir'");
  });

  it("reads allowed endpoints, comma-separated from the environment, and rejects one that is not a URL", () => {
    const env = { LAKESMITH_AGENT_ALLOW_ENDPOINTS: "https://uc.example.com,thrift://hms:9083" };
    expect(run(base, env).allow_endpoints).toEqual(["https://uc.example.com", "thrift://hms:9083"]);
    const error = errorOf(() => run([...base, "--allow-endpoints", "uc.example.com"]));
    expect(error).toContain("--allow-endpoints");
    expect(error).toContain("endpoint 'uc.example.com' is not a URL");
  });

  it("rejects unknown flags, unknown file keys and files that are not JSON objects", () => {
    expect(errorOf(() => loadCliConfig([...base, "--concurency", "2"], {}))).toContain("--concurency");
    expect(errorOf(() => run(["--config", configFile({ tokn: "x" })]))).toContain("unknown key tokn");
    expect(errorOf(() => run(["--config", configFile("{not json")]))).toContain("is not valid JSON");
    expect(errorOf(() => run(["--config", configFile([1])]))).toContain("must hold one JSON object");
    expect(errorOf(() => run(["--config", "/no/such/file.json"]))).toContain("ENOENT");
  });

  it("answers --help and --print-config without a token in the output", () => {
    expect(loadCliConfig(["--help"], {}).command).toBe("help");
    const printed = loadCliConfig([...base, "--print-config"], {});
    expect(printed.command).toBe("print-config");
  });

  it("reads Google Cloud and Azure credentials from the environment and never prints them", () => {
    const env = {
      LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID: "GOOG1EXAMPLE",
      LAKESMITH_AGENT_GCS_HMAC_SECRET: "gcs-secret",
      LAKESMITH_AGENT_AZURE_ACCOUNT_KEY: "azure-key",
      LAKESMITH_AGENT_AZURE_ENDPOINT: "http://127.0.0.1:10000/devstoreaccount1",
    };
    const config = run([...base, "--allow", "gs://lake/x", "--allow", "azure://acct1/raw"], env);
    expect(config).toMatchObject({ gcs_hmac_secret: "gcs-secret", azure_account_key: "azure-key" });
    const shown = JSON.stringify(redactedConfig(config));
    expect(shown).not.toContain("gcs-secret");
    expect(shown).not.toContain("azure-key");
    expect(shown).toContain("GOOG1EXAMPLE");
    expect(redactedConfig(config)).toMatchObject({ token: "<redacted>", azure_account_key: "<redacted>" });
  });

  it("refuses to announce gs:// or azure:// locations it has no credential for", () => {
    expect(errorOf(() => run([...base, "--allow", "gs://lake/x"]))).toContain(
      "--allow: names gs:// locations, which need an HMAC key: set LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID",
    );
    expect(errorOf(() => run([...base, "--allow", "abfss://raw@acct1.dfs.core.windows.net/x"]))).toContain(
      "--allow: names azure:// locations, which need a credential: set LAKESMITH_AGENT_AZURE_CONNECTION_STRING",
    );
    const sas = { LAKESMITH_AGENT_AZURE_SAS_TOKEN: "sv=2024&sig=x" };
    expect(run([...base, "--allow", "azure://acct1/raw"], sas).allow).toEqual(["azure://acct1/raw"]);
  });

  it("refuses half an HMAC key, and more than one Azure credential", () => {
    expect(errorOf(() => run(base, { LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID: "GOOG1" }))).toContain(
      "LAKESMITH_AGENT_GCS_HMAC_SECRET): is required with the other half of the HMAC key",
    );
    const two = { LAKESMITH_AGENT_AZURE_ACCOUNT_KEY: "k", LAKESMITH_AGENT_AZURE_SAS_TOKEN: "sv=1" };
    expect(errorOf(() => run(base, two))).toContain(
      "LAKESMITH_AGENT_AZURE_SAS_TOKEN: is one Azure credential too many: give one of azure_account_key, azure_sas_token",
    );
  });
});
