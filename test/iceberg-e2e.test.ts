/**
 * Iceberg tables end to end, through the public API and a `lakesmith-agent` child process: a real
 * Node control plane, real WebSockets, copies of a real Iceberg table (Spark's TPC-H lineitem) on
 * `file://` and on S3 (s3rver on loopback). Registered with `format: "iceberg"`, onboarded and
 * crunched; the rows read from the new snapshot equal the rows before. Tables the agent must not
 * rewrite are refused at onboarding with the reason.
 */
import { existsSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "@lakesmith/shared/time";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { checksumFiles, Engine } from "../agent/src/engine/index.ts";
import { icebergFormat } from "../agent/src/formats/index.ts";
import { type ObjectStore, storeFor } from "../agent/src/store/index.ts";
import { copyIcebergFixture } from "../agent/test/support/iceberg.ts";
import { writeIcebergTable } from "../agent/test/support/iceberg-tables.ts";
import {
  type LocalS3,
  S3RVER_CREDENTIALS,
  startS3rver,
  uploadFolder,
} from "../agent/test/support/local-s3.ts";
import type { ChildAgent } from "./support/agents.ts";
import { connectedChildAgent, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "iceberg-e2e-"));
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

/** The table's rows as the agent's Iceberg reader sees them: version, files and one checksum. */
async function tableRows(store: ObjectStore) {
  const engine = await Engine.open();
  try {
    const scratch = mkdtempSync(join(root, "read-"));
    const table = await icebergFormat.load({
      store,
      engine,
      scratchDir: scratch,
      clock: systemClock,
      log: pino({ level: "silent" }),
    });
    const locals: string[] = [];
    for (const [i, f] of table.files.entries()) {
      const local = join(scratch, `${i}.parquet`);
      await store.download(f.key, local);
      locals.push(local);
    }
    const sum = await checksumFiles(engine, locals, table.columns);
    return { version: table.version, files: table.files.length, sum };
  } finally {
    engine.close();
  }
}

/** A private copy of a fixture table, on `file://` in place or uploaded to S3 under `name`. */
async function icebergTableOn(where: "file" | "s3", fixture: string, name: string) {
  const folder = join(root, `${name}-${where}`);
  if (where === "file") {
    await copyIcebergFixture(fixture, folder);
    return { uri: `file://${folder}`, store: storeFor(`file://${folder}`) };
  }
  const uri = `s3://lake/warehouse/${name}`;
  await copyIcebergFixture(fixture, folder, uri);
  const store = storeFor(`${uri}/`, { s3: s3.options });
  await uploadFolder(folder, store);
  return { uri, store };
}

describe("Iceberg end to end", () => {
  for (const where of ["file", "s3"] as const) {
    it(`onboards and crunches lineitem on ${where}://: identical rows, one replace snapshot, DRR in the metrics`, async () => {
      plane = await startPlane();
      await childAgent(plane, `iceberg-agent-${where}`);
      const { uri, store } = await icebergTableOn(where, "iceberg/lineitem_iceberg", "lineitem");
      const before = await tableRows(store);

      const { table, job } = await onboardTable(plane, "tpch.lineitem", uri, "iceberg");
      expect(job.status, job.error ?? "").toBe("succeeded");
      expect(table).toMatchObject({ format: "iceberg", onboarding_status: "active" });

      const res = await plane.api("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const done = await plane.waitForJob(res.body.id, ["succeeded", "failed"], 90_000);
      expect(done.status, done.error ?? "").toBe("succeeded");
      const metrics = (await plane.api("GET", `/api/v1/crunch/${res.body.id}/metrics`)).body.metrics;
      expect(metrics).toMatchObject({
        table_version_before: 2,
        committed_version: 3,
        rows_in: 51_793,
        rows_out: 51_793,
        files_after: 1,
      });
      expect(typeof metrics.drr).toBe("number");

      const after = await tableRows(store);
      expect(after.version).toBe(3);
      expect(after.files).toBe(1);
      expect(after.sum).toEqual(before.sum);
    });
  }

  for (const where of ["file", "s3"] as const) {
    it(`onboards and crunches a partitioned table of many small files on ${where}://, a date range at a time`, async () => {
      plane = await startPlane();
      await childAgent(plane, `iceberg-events-agent-${where}`);
      const folder = join(root, `events-${where}`);
      const uri = where === "file" ? `file://${folder}` : "s3://lake/warehouse/iceberg-events";
      await writeIcebergTable({
        dir: folder,
        ...(where === "s3" ? { location: uri } : {}),
        columns: [
          { name: "event_id", type: "long", sql: "i" },
          {
            name: "event_ts",
            type: "timestamptz",
            sql: "timestamptz '2026-01-01 00:00:00+00' + to_minutes(i % 4320)",
          },
          { name: "country", type: "string", sql: "['US','DE','FR','JP'][1 + (i % 4)::int]" },
          { name: "amount", type: "decimal(12,2)", sql: "(i % 997) / 10" },
        ],
        partition: [{ source: "event_ts", transform: "day" }],
        // 4,320 rows a day over three days, 20 files a day.
        rows: 12_960,
        files: 60,
        commits: 4,
      });
      const store = storeFor(where === "file" ? uri : `${uri}/`, where === "s3" ? { s3: s3.options } : {});
      if (where === "s3") await uploadFolder(folder, store);
      const before = await tableRows(store);
      expect(before.files).toBe(60);

      const { table, job } = await onboardTable(plane, "shop.iceberg_events", uri, "iceberg");
      expect(job.status, job.error ?? "").toBe("succeeded");
      expect(table.recipe).toMatchObject({
        partition_columns: ["event_ts_day"],
        partition_pattern: "event_ts_day=YYYY-MM-DD",
        date_filter_column: "event_ts_day",
      });

      // One job per day. On file:// a second agent lets the two commit to the table's metadata at
      // once (put-if-absent decides); s3rver ignores If-None-Match, so there they run one by one.
      if (where === "file") await childAgent(plane, `iceberg-events-agent-${where}-2`);
      const res = await plane.api("POST", `/api/v1/tables/${table.id}/crunch`, {
        backfill_start_date: "2026-01-02",
        backfill_end_date: "2026-01-03",
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const ids = (res.body.jobs as { id: string }[]).map((j) => j.id);
      expect(ids).toHaveLength(2);
      const perDay = [];
      for (const id of ids) {
        const done = await plane.waitForJob(id, ["succeeded", "failed"], 90_000);
        expect(done.status, done.error ?? "").toBe("succeeded");
        perDay.push((await plane.api("GET", `/api/v1/crunch/${id}/metrics`)).body.metrics);
      }
      expect(perDay.map((m) => [m.partitions_crunched, m.files_before, m.files_after])).toEqual([
        [1, 20, 1],
        [1, 20, 1],
      ]);

      const after = await tableRows(store);
      expect(after.sum).toEqual(before.sum);
      expect(after.files).toBe(22);
    });
  }

  it("vacuums lineitem after a crunch: the expired snapshots' files become records, hard-delete removes them, the rows stay", async () => {
    plane = await startPlane();
    await childAgent(plane, "iceberg-vacuum-agent");
    const config = await plane.api("PUT", "/api/v1/config", { pending_deletion_grace_hours: 0 });
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const { uri, store } = await icebergTableOn("file", "iceberg/lineitem_iceberg", "vacuumed");
    const folder = join(root, "vacuumed-file");
    // An orphan a writer left years ago: a full vacuum proposes it too.
    writeFileSync(join(folder, "data/stray.parquet"), "not referenced");
    utimesSync(join(folder, "data/stray.parquet"), new Date("2024-01-01"), new Date("2024-01-01"));
    const { table, job } = await onboardTable(plane, "tpch.vacuumed", uri, "iceberg");
    expect(job.status, job.error ?? "").toBe("succeeded");
    const wait = async (id: string) => {
      const done = await plane?.waitForJob(id, ["succeeded", "failed"], 90_000);
      expect(done?.status, done?.error ?? "").toBe("succeeded");
      return done;
    };
    await wait((await plane.api("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true })).body.id);
    const before = await tableRows(store);

    const body = { mode: "full", retention_hours: 0 };
    const dry = await plane.api("POST", `/api/v1/tables/${table.id}/vacuum`, { ...body, dry_run: true });
    const dryJob = await wait(dry.body.id);
    const planned = ((dryJob?.result?.files ?? []) as { path: string; reason: string }[]).map(
      (f) => `${f.reason} ${f.path}`,
    );
    expect(planned).toContain("orphan data/stray.parquet");
    expect(planned.some((p) => p.startsWith("expired_snapshot data/"))).toBe(true);

    await wait((await plane.api("POST", `/api/v1/tables/${table.id}/vacuum`, body)).body.id);
    const recorded = (await plane.api("GET", `/api/v1/pending-deletions?table_id=${table.id}&limit=100`)).body
      .items as {
      path: string;
      reason: string;
      vacuum_mode: string;
    }[];
    expect(recorded.map((r) => `${r.reason} ${r.path}`).sort()).toEqual([...planned].sort());
    expect(new Set(recorded.map((r) => r.vacuum_mode))).toEqual(new Set(["full"]));

    const hard = await plane.api("POST", `/api/v1/vacuum/hard-delete?table_id=${table.id}`);
    expect(hard.status, JSON.stringify(hard.body)).toBe(202);
    for (const j of hard.body.jobs) await wait(j.id);
    for (const r of recorded) expect(existsSync(join(folder, r.path)), r.path).toBe(false);
    const after = await tableRows(store);
    expect(after.sum).toEqual(before.sum);
    expect(after.version).toBe(before.version + 1);
  });

  it("refuses a table with equality deletes at onboarding, with the reason", async () => {
    plane = await startPlane();
    await childAgent(plane, "iceberg-refusing-agent");
    const { uri } = await icebergTableOn("file", "equality_deletes/warehouse/mydb/mytable", "deletes");
    const { table, job } = await onboardTable(plane, "odd.deletes", uri, "iceberg");
    expect(job.status).toBe("failed");
    expect(table.onboarding_status).toBe("failed");
    expect(table.onboarding_error).toContain("can't be managed safely");
    expect(table.onboarding_error).toMatch(/delete/);
  });
});
