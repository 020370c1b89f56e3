/**
 * Helpers for the catalog connection suites: connections of each type with recognisable secrets,
 * an agent allowed their endpoints that leases and completes catalog jobs through the job service
 * as an agent would, and syncs reported as an agent does (tables in parts, then counts), built from
 * the shared contract (so a drift fails to compile).
 */
import type {
  CatalogSyncResult,
  CatalogTestResult,
  ListedTable,
  SyncedTable,
} from "@lakesmith/shared/catalogs";
import { sql } from "drizzle-orm";
import type { Job } from "../../src/db/schema.ts";
import type { AgentAbilities } from "../../src/jobs/offer.ts";
import { ADMIN_KEY, type TestPlane } from "../harness.ts";

export const WORKSPACE_SECRET = "dbx-client-secret-7f3a9c";
export const POLARIS_SECRET = "polaris-client-secret-2b8e41";
export const HIVE_PASSWORD = "hive-password-c0ffee";
export const UC_TOKEN = "uc-static-token-d15ea5e";

export const WORKSPACE = {
  type: "workspace",
  workspace_url: "https://dbc-1.cloud.databricks.com",
  client_id: "sp-client-1",
  client_secret: WORKSPACE_SECRET,
};
export const HIVE = {
  type: "hive_metastore",
  metastore_uri: "thrift://hms.internal:9083",
  username: "lakesmith",
  password: HIVE_PASSWORD,
};
export const POLARIS = {
  type: "polaris",
  catalog_url: "https://polaris.example.com/api/catalog",
  warehouse: "analytics",
  client_id: "polaris-client",
  client_secret: POLARIS_SECRET,
  token_url: "https://auth.example.com/oauth/token",
  scope: "PRINCIPAL_ROLE:ALL",
};

/** Every secret the suites use: none may appear in an answer or, once a job ended, in its row. */
export const ALL_SECRETS = [WORKSPACE_SECRET, POLARIS_SECRET, HIVE_PASSWORD, UC_TOKEN];

/** An agent that runs catalog jobs and may reach the suites' endpoints (endpoint keys). */
export const CATALOG_AGENT = {
  id: "agt_catalogs_for_tests",
  kinds: ["catalog_test", "catalog_sync"],
  capabilities: [] as string[],
  allow: [] as string[],
  endpoints: [
    "https://dbc-1.cloud.databricks.com:443",
    "thrift://hms.internal:9083",
    "https://polaris.example.com:443",
    "https://auth.example.com:443",
  ],
};

/** Offers queued jobs to the agent until it gets `jobId`, hands the others back, and leases it. */
export async function lease(
  plane: TestPlane,
  jobId: string,
  agent: AgentAbilities = CATALOG_AGENT,
): Promise<Job> {
  const { jobs: service } = plane.services;
  const others: Job[] = [];
  let job: Job | undefined;
  for (;;) {
    job = await service.offerNext(agent);
    if (!job || job.id === jobId) break;
    others.push(job);
  }
  for (const other of others) await service.reject(agent.id, other.id, other.fence);
  if (!job) throw new Error(`job ${jobId} was not offered`);
  const acked = await service.ack(agent.id, job.id, job.fence);
  if (acked.kind !== "done") throw new Error(`ack refused: ${acked.kind}`);
  return acked.job;
}

/**
 * Leases the job (unless it is leased already) and reports `result`; a sync (`syncResult`) sends
 * its tables in parts of two first, then its counts.
 */
export async function succeed(
  plane: TestPlane,
  jobOrId: string | Job,
  report: object | SyncReport,
): Promise<Job> {
  const job = typeof jobOrId === "string" ? await lease(plane, jobOrId) : jobOrId;
  let result = report;
  if (report instanceof SyncReport) {
    const parts = [];
    for (let i = 0; i < report.tables.length; i += 2) parts.push({ tables: report.tables.slice(i, i + 2) });
    await sendParts(plane, job, parts);
    result = report.result;
  }
  const done = await plane.services.jobs.complete(CATALOG_AGENT.id, job.id, job.fence, "succeeded", {
    result: result as Record<string, unknown>,
  });
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  return done.job;
}

/** Leases the job and reports a failure that is not retried. */
export async function fail(plane: TestPlane, jobId: string, error: string): Promise<Job> {
  const job = await lease(plane, jobId);
  const done = await plane.services.jobs.complete(CATALOG_AGENT.id, job.id, job.fence, "failed", {
    error,
    retryable: false,
  });
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  return done.job;
}

/** A table as the agent reports it; `full_name` is `<catalog>.<schema>.<name>`. */
export function syncedTable(fullName: string, extra: Partial<SyncedTable> = {}): SyncedTable {
  const [catalog = "", schema = "", name = ""] = fullName.split(".");
  return {
    full_name: fullName,
    catalog,
    schema,
    name,
    format: "delta",
    table_type: "MANAGED",
    location: `s3://lake/${catalog}/${schema}/${name}`,
    size_bytes: 500_000_000,
    has_partitions: false,
    updated_at: Date.parse("2026-01-01T00:00:00Z"),
    detail: { table_id: `uc-${name}`, owner: "data-eng", properties: { "delta.minReaderVersion": "1" } },
    ...extra,
  };
}

/** A sync as an agent reports it: its tables (sent in parts) and its result (counts). */
export class SyncReport {
  constructor(
    readonly tables: SyncedTable[],
    readonly result: CatalogSyncResult,
  ) {}
}

export function syncResult(tables: SyncedTable[], extra: Partial<CatalogSyncResult> = {}): SyncReport {
  const catalogs = [...new Set(tables.map((t) => t.catalog))].sort();
  const schemas = new Set(tables.map((t) => `${t.catalog}\u0000${t.schema}`));
  return new SyncReport(tables, {
    mode: "full",
    catalogs,
    schemas_count: schemas.size,
    tables_count: tables.length,
    unchanged_count: 0,
    below_min_size: 2,
    duration_ms: 321,
    ...extra,
  });
}

/** A part of a sync as the agent sends it. */
export interface TestPart {
  tables?: SyncedTable[];
  listed?: ListedTable[];
}

/**
 * Sends `parts` of the leased job's output in order, numbered from `first`, as the hub hands them
 * to the job service; answers each part's reply. Throws when one is refused.
 */
export async function sendParts(
  plane: TestPlane,
  job: Job,
  parts: TestPart[],
  first = 1,
): Promise<(Record<string, unknown> | undefined)[]> {
  const replies = [];
  for (const [i, part] of parts.entries()) {
    const outcome = await plane.services.jobs.part(CATALOG_AGENT.id, {
      job_id: job.id,
      fence: job.fence,
      seq: first + i,
      part: { ...part },
    });
    if (outcome.kind !== "applied") throw new Error(`part ${first + i} refused: ${outcome.reason}`);
    replies.push(outcome.reply);
  }
  return replies;
}

export function testResult(extra: Partial<CatalogTestResult> = {}): CatalogTestResult {
  return { ok: true, catalogs: ["main", "samples"], message: null, duration_ms: 87, ...extra };
}

/** The admin's call, answering the JSON and the status. */
export function adminJson(plane: TestPlane) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await plane.call(method, path, { token: ADMIN_KEY, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: JSON of the API
    return { status: res.status, text, body: (text ? JSON.parse(text) : undefined) as any };
  };
}

/** A row as SQLite stores it, every column as text: what a database dump would show. */
export async function rawRow(plane: TestPlane, table: string, id: string): Promise<string> {
  const rows = await plane.services.db.all<Record<string, unknown>>(
    sql`select * from ${sql.identifier(table)} where id = ${id}`,
  );
  if (!rows[0]) throw new Error(`no row ${id} in ${table}`);
  return JSON.stringify(rows[0]);
}
