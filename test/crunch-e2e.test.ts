/**
 * Onboarding and crunch end to end, through the public API and `lakesmith-agent` child processes:
 * a real Node control plane, real WebSockets, real Delta tables on `file://` and on S3 (s3rver on
 * loopback), DuckDB reading the rows before and after. An agent is SIGKILLed in the middle of a
 * crunch, at the moment it starts its commit, and the retried job must leave exactly one commit.
 */
import { cpSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JOB_ID_FIELD, loadSnapshot } from "../agent/src/delta/index.ts";
import { duckdbColumns } from "../agent/src/delta/schema.ts";
import { checksumFiles, Engine } from "../agent/src/engine/index.ts";
import { type ObjectStore, storeFor } from "../agent/src/store/index.ts";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";
import {
  type LocalS3,
  S3RVER_CREDENTIALS,
  startS3rver,
  uploadFolder,
} from "../agent/test/support/local-s3.ts";
import type { ChildAgent } from "./support/agents.ts";
import { writeEventsTable } from "./support/delta-tables.ts";
import { connectedChildAgent, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

const FIXTURES = DELTA_FIXTURES;
const root = mkdtempSync(join(tmpdir(), "crunch-e2e-"));
let s3: LocalS3;
let plane: TestPlane | undefined;
const children: ChildAgent[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});
afterEach(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  plane = undefined;
});

const childAgent = (p: TestPlane, name: string) =>
  connectedChildAgent(
    p,
    name,
    {
      LAKESMITH_AGENT_CONCURRENCY: "1",
      LAKESMITH_AGENT_ALLOW: `file://${root},s3://lake`,
      LAKESMITH_AGENT_S3_ENDPOINT: s3.endpoint,
      LAKESMITH_AGENT_S3_FORCE_PATH_STYLE: "true",
      LAKESMITH_AGENT_S3_REGION: "us-east-1",
      LAKESMITH_AGENT_MEMORY_LIMIT_MB: "512",
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    children,
  );

async function crunch(p: TestPlane, tableId: string, body: Record<string, unknown>) {
  return (await crunchAll(p, tableId, body))[0] as string;
}

/** Every job a trigger queued: one per day of a range on a date partition column. */
async function crunchAll(p: TestPlane, tableId: string, body: Record<string, unknown>) {
  const res = await p.api("POST", `/api/v1/tables/${tableId}/crunch`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return (res.body.jobs as { id: string }[]).map((j) => j.id);
}

/** Waits for every job to succeed; their metrics. */
async function succeeded(p: TestPlane, ids: string[]) {
  const metrics = [];
  for (const id of ids) {
    const done = await p.waitForJob(id, ["succeeded", "failed"], 90_000);
    expect(done.status, done.error ?? "").toBe("succeeded");
    metrics.push((await p.api("GET", `/api/v1/crunch/${id}/metrics`)).body);
  }
  return metrics;
}

/** Every partition's checksum of the table's current rows. */
async function tableRows(store: ObjectStore) {
  const engine = await Engine.open();
  try {
    const scratch = mkdtempSync(join(root, "read-"));
    const snapshot = await loadSnapshot(store, engine, { scratchDir: scratch });
    const columns = duckdbColumns(snapshot.metadata.schema, snapshot.metadata.partitionColumns);
    const byPartition = new Map<string, string[]>();
    for (const [i, f] of snapshot.files.entries()) {
      const local = join(scratch, `${i}.parquet`);
      await store.download(f.path, local);
      const key = JSON.stringify(f.partitionValues);
      byPartition.set(key, [...(byPartition.get(key) ?? []), local]);
    }
    // An independent look at the same rows, in plain SQL, beside the engine's checksum.
    const all = [...byPartition.values()].flat();
    const [plain] = await engine.query(
      `select count(*) as n, md5(string_agg(md5(t::varchar), '' order by md5(t::varchar))) as rows
       from read_parquet([${all.map((f) => `'${f}'`).join(", ")}], union_by_name = true) t`,
    );
    const sums: Record<string, unknown> = { plain };
    for (const [key, files] of [...byPartition].sort(([a], [b]) => a.localeCompare(b)))
      sums[key] = await checksumFiles(engine, files, columns);
    return { sums, snapshot };
  } finally {
    engine.close();
  }
}

/** A private copy of the table in `folder`, on `file://` in place or uploaded to S3 under `name`. */
async function tableOn(where: "file" | "s3", name: string, folder: string) {
  if (where === "file") return { uri: `file://${folder}`, store: storeFor(`file://${folder}`) };
  const store = storeFor(`s3://lake/warehouse/${name}/`, { s3: s3.options });
  await uploadFolder(folder, store);
  return { uri: `s3://lake/warehouse/${name}`, store };
}

describe("crunch end to end", () => {
  for (const where of ["file", "s3"] as const) {
    it(`onboards and crunches COVID-19_NYT on ${where}://: identical rows, DRR above zero in the metrics`, async () => {
      plane = await startPlane();
      await childAgent(plane, `covid-agent-${where}`);
      const path = join(root, `covid-${where}`);
      cpSync(join(FIXTURES, "COVID-19_NYT"), path, { recursive: true });
      const { uri, store } = await tableOn(where, "covid", path);
      const before = await tableRows(store);

      const { table, job } = await onboardTable(plane, "nyt.covid", uri);
      expect(job.status, job.error ?? "").toBe("succeeded");
      expect(table).toMatchObject({ onboarding_status: "active", recipe: { date_filter_column: "date" } });

      const id = await crunch(plane, table.id, {
        backfill_start_date: "2020-01-01",
        backfill_end_date: "2021-12-31",
        cluster_columns: "state,date",
        priority: "P1",
      });
      const done = await plane.waitForJob(id, ["succeeded", "failed"], 90_000);
      expect(done.status, done.error ?? "").toBe("succeeded");
      const metrics = (await plane.api("GET", `/api/v1/crunch/${id}/metrics`)).body;
      expect(metrics.metrics.drr).toBeGreaterThan(0);
      // The cluster columns asked for are applied (agent/test/crunch-run.test.ts reads the files' order).
      expect(metrics.job.cluster_columns).toEqual(["state", "date"]);
      expect(metrics.metrics.settings.sort_columns).toEqual(["state", "date"]);
      expect(metrics.metrics.notes).toEqual([]);
      expect(metrics.metrics.rows_in).toBe(1_111_930);
      expect(metrics.metrics.rows_out).toBe(1_111_930);

      const after = await tableRows(store);
      expect(after.sums).toEqual(before.sums);
      expect(after.snapshot.version).toBe(1);
    });

    it(`onboards and crunches a partitioned table of small snappy files on ${where}://`, async () => {
      plane = await startPlane();
      await childAgent(plane, `events-agent-${where}`);
      const local = join(root, `events-${where}`);
      await writeEventsTable(local, { days: 3, filesPerDay: 10, rowsPerFile: 2000 });
      const { uri, store } = await tableOn(where, "events", local);
      const before = await tableRows(store);

      const { table, job } = await onboardTable(plane, "shop.events", uri);
      expect(job.status, job.error ?? "").toBe("succeeded");
      expect(table.recipe).toMatchObject({
        partition_pattern: "event_date=YYYY-MM-DD",
        date_filter_column: "event_date",
      });

      // One job per day of January; the three days with files are crunched, the others find none.
      const ids = await crunchAll(plane, table.id, {
        backfill_start_date: "2026-01-01",
        backfill_end_date: "2026-01-31",
      });
      expect(ids).toHaveLength(31);
      const days = (await succeeded(plane, ids)).map((m) => m.metrics);
      const total = (field: string) => days.reduce((sum, m) => sum + m[field], 0);
      expect(total("partitions_crunched")).toBe(3);
      expect(total("files_before")).toBe(30);
      expect(days.slice(0, 3).every((m) => m.drr > 0)).toBe(true);
      expect(days.slice(3).every((m) => m.committed_version === null)).toBe(true);

      const after = await tableRows(store);
      expect(after.sums).toEqual(before.sums);
      expect(after.snapshot.files.length).toBe(total("files_after"));

      // A lookback over days the table has no file for succeeds with zeros, and says so.
      const empty = await crunchAll(plane, table.id, { lookback_start: 2, lookback_end: 0 });
      const [emptyMetrics] = await succeeded(plane, empty);
      const range = emptyMetrics.job.date_range;
      expect(emptyMetrics.metrics).toMatchObject({ files_before: 0, committed_version: null });
      expect(emptyMetrics.metrics.notes).toEqual([
        `no file fell in the range ${range.start} to ${range.end} (inclusive) of column event_date: nothing to crunch among the table's ${total("files_after")} files`,
      ]);
    });
  }

  it("refuses a table with unknown features at onboarding, with the reason", async () => {
    plane = await startPlane();
    await childAgent(plane, "refusing-agent");
    const path = join(root, "features");
    cpSync(join(FIXTURES, "simple_table_features"), path, { recursive: true });
    const { table, job } = await onboardTable(plane, "odd.features", `file://${path}`);
    expect(job.status).toBe("failed");
    expect(table.onboarding_status).toBe("failed");
    expect(table.onboarding_error).toContain("can't be managed safely");
  });

  it("survives an agent killed as it commits: the retried job finishes and the table has one commit of it", async () => {
    plane = await startPlane();
    const path = join(root, "events-kill");
    await writeEventsTable(path, { days: 2, filesPerDay: 10, rowsPerFile: 2000 });
    const store = storeFor(`file://${path}`);
    const before = await tableRows(store);
    const doomed = await childAgent(plane, "doomed");
    const { table } = await onboardTable(plane, "shop.kill", `file://${path}`);

    // The whole table in one job (a range would be one job per day, each with its own commit).
    const id = await crunch(plane, table.id, { whole_table: true });
    await doomed.waitForLog((l) => l.msg === "committing" && l.job_id === id, 60_000);
    doomed.child.kill("SIGKILL");
    await doomed.exited;

    await childAgent(plane, "rescuer");
    const done = await plane.waitForJob(id, ["succeeded", "failed"], 90_000);
    expect(done.status, done.error ?? "").toBe("succeeded");
    expect(done.attempt).toBe(2);

    const after = await tableRows(store);
    expect(after.sums).toEqual(before.sums);
    const ours = after.snapshot.commits.filter((c) => c.commitInfo?.[JOB_ID_FIELD] === id);
    expect(ours).toHaveLength(1);
    expect(after.snapshot.version).toBe(1);
  });
});
