/**
 * Crunch scale-out end to end (issue 20): a crunch over six days of a table partitioned by date is
 * six jobs, one per day, and three real agents (in this process, real table handlers, one job at a
 * time each, over real WebSockets to a real Node control plane) share them. Each job commits only
 * its own day to the one Delta table on `file://`, racing the others for the log's next version:
 * every job succeeds, at least two agents took part, the log has exactly one commit per job that
 * touches only its day, and DuckDB reads the same rows before and after.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { pino } from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Agent } from "../agent/src/agent.ts";
import { parseConfig } from "../agent/src/config.ts";
import { JOB_ID_FIELD, loadSnapshot, readCommit } from "../agent/src/delta/index.ts";
import { Engine, sqlString } from "../agent/src/engine/index.ts";
import { tableHandlers } from "../agent/src/handlers/tables.ts";
import { HandlerRegistry } from "../agent/src/registry.ts";
import { type ObjectStore, storeFor } from "../agent/src/store/index.ts";
import { writeEventsTable } from "./support/delta-tables.ts";
import { eventually, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "lakesmith-scale-out-"));
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05", "2026-01-06"];
let plane: TestPlane | undefined;
const agents: Agent[] = [];

afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await plane?.stop();
  plane = undefined;
});

/** A real agent allowed the test's folder, one job at a time, connected. */
async function agent(p: TestPlane, name: string): Promise<string> {
  const { id, token } = await p.createAgentToken(name);
  const config = parseConfig({
    control_plane: p.url,
    token,
    concurrency: 1,
    allow: [pathToFileURL(root).href],
    scratch: mkdtempSync(join(root, `scratch-${name}-`)),
    memory_limit_mb: 256,
    log_level: "silent",
  });
  const a = new Agent({
    config,
    registry: new HandlerRegistry(tableHandlers(config)),
    log: pino({ level: "silent" }),
  });
  agents.push(a);
  await a.start();
  await eventually(() => (a.connected ? true : undefined), 5000, `agent ${name}'s session`);
  return id;
}

/** The table's rows as DuckDB reads its current files: count, checksum, and rows per day. */
async function rowsOf(store: ObjectStore, path: string) {
  const engine = await Engine.open();
  try {
    const snapshot = await loadSnapshot(store, engine, { scratchDir: mkdtempSync(join(root, "read-")) });
    const files = snapshot.files.map((f) => sqlString(join(path, f.path)));
    const [all] = await engine.query(
      `select count(*)::bigint as n, md5(string_agg(md5(t::varchar), '' order by md5(t::varchar))) as sum
       from read_parquet([${files.join(", ")}], hive_partitioning = true) t`,
    );
    const perDay = await engine.query(
      `select event_date::varchar as day, count(*)::bigint as n
       from read_parquet([${files.join(", ")}], hive_partitioning = true) group by 1 order by 1`,
    );
    return { all, perDay, version: snapshot.version, files: snapshot.files.length };
  } finally {
    engine.close();
  }
}

describe("a crunch fanned out over three agents", () => {
  it("runs one job per day on more than one agent, one commit per job touching only its day, every row intact", async () => {
    const path = join(root, "events");
    await writeEventsTable(path, { days: DAYS.length, filesPerDay: 6, rowsPerFile: 4000 });
    const store = storeFor(pathToFileURL(path).href);
    const before = await rowsOf(store, path);

    plane = await startPlane();
    const ids = [await agent(plane, "scale-a"), await agent(plane, "scale-b"), await agent(plane, "scale-c")];
    const { table, job: onboarding } = await onboardTable(plane, "scale.events", pathToFileURL(path).href);
    expect(onboarding.status, onboarding.error ?? "").toBe("succeeded");
    expect(table.recipe).toMatchObject({
      partition_columns: ["event_date"],
      date_filter_column: "event_date",
    });

    const res = await plane.api("POST", `/api/v1/tables/${table.id}/crunch`, {
      backfill_start_date: DAYS[0],
      backfill_end_date: DAYS.at(-1),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const queued = res.body.jobs as { id: string; partition: string }[];
    expect(queued.map((j) => j.partition)).toEqual(DAYS.map((d) => `event_date=${d}`));
    expect(res.body.id).toBe(queued[0]?.id);

    const p = plane;
    const ended = await Promise.all(queued.map((j) => p.waitForJob(j.id, ["succeeded", "failed"], 120_000)));
    for (const job of ended) expect(job.status, job.error ?? "").toBe("succeeded");
    const owners = new Set(ended.map((j) => j.agent_id));
    expect([...owners].every((id) => ids.includes(id ?? ""))).toBe(true);
    expect(owners.size).toBeGreaterThanOrEqual(2);

    // One commit per job, each removing and adding files of its own day only.
    const after = await rowsOf(store, path);
    expect(after.version).toBe(before.version + DAYS.length);
    const dayOfJob = new Map(queued.map((j) => [j.id, j.partition.slice("event_date=".length)]));
    const committed = new Map<string, number>();
    for (let version = before.version + 1; version <= after.version; version++) {
      const commit = await readCommit(store, version, 0);
      const jobId = String(commit.commitInfo?.[JOB_ID_FIELD]);
      expect(dayOfJob.has(jobId), `version ${version} was made by ${jobId}`).toBe(true);
      committed.set(jobId, version);
      const days = new Set(
        commit.actions.flatMap((a) =>
          "add" in a
            ? [a.add.partitionValues.event_date]
            : "remove" in a
              ? [a.remove.partitionValues?.event_date]
              : [],
        ),
      );
      expect([...days]).toEqual([dayOfJob.get(jobId)]);
    }
    expect(committed.size).toBe(DAYS.length);
    for (const job of ended)
      expect((job.result as { committed_version: number }).committed_version).toBe(
        committed.get(job.id ?? ""),
      );

    // Every row is still there, in its day, and the files were merged.
    expect(after.all).toEqual(before.all);
    expect(after.perDay).toEqual(before.perDay);
    expect(after.files).toBeLessThan(before.files);
  });
});
