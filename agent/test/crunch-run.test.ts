/**
 * Crunch jobs run by the handler itself (no control plane), on real Delta tables in temporary
 * folders: the COVID-19_NYT fixture and a generated table of many small snappy files. The windows a
 * crash or a concurrent writer can hit are forced with a store that runs a hook before a commit
 * (a real `FileStore` underneath), so each case happens every run, not by luck of timing.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, describe, expect, it } from "vitest";
import { appendCommit, writeEventsTable } from "../../test/support/delta-tables.ts";
import { runCrunch } from "../src/crunch/run.ts";
import { JOB_ID_FIELD, loadSnapshot } from "../src/delta/index.ts";
import { duckdbColumns } from "../src/delta/schema.ts";
import { checksumFiles, compareChecksums, Engine, sqlString } from "../src/engine/index.ts";
import { runInspection } from "../src/inspect/run.ts";
import {
  FileStore,
  type ObjectStore,
  type WriteIfAbsentResult,
  type WriteSource,
} from "../src/store/index.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";
import { jobContext } from "./support/maintenance.ts";

const FIXTURES = DELTA_FIXTURES;
const root = mkdtempSync(join(tmpdir(), "crunch-run-"));
const engines: Engine[] = [];
afterAll(() => {
  for (const e of engines) e.close();
  rmSync(root, { recursive: true, force: true });
});

/** A crunch job's context, and the progress it reported. */
function context<P>(payload: P, options: { jobId?: string; signal?: AbortSignal } = {}) {
  const ctx = jobContext(root, "crunch", payload, options);
  return { ctx, progress: ctx.reports };
}

function payloadFor(path: string, extra: Partial<CrunchPayload> = {}): CrunchPayload {
  return { table_id: "tbl_test", uri: `file://${path}`, format: "delta", ...extra };
}

/** A real file store with a hook that runs before each log write (commits and checkpoints). */
class HookedStore extends FileStore {
  beforeLogWrite: ((key: string) => Promise<void>) | undefined;
  override async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    if (key.startsWith("_delta_log/") && this.beforeLogWrite) await this.beforeLogWrite(key);
    return super.writeIfAbsent(key, source);
  }
}

/** The table's rows as a checksum, read through its current snapshot. */
async function tableChecksum(store: ObjectStore, path: string) {
  const engine = await Engine.open();
  engines.push(engine);
  const snapshot = await loadSnapshot(store, engine, { scratchDir: mkdtempSync(join(root, "log-")) });
  const { schema, partitionColumns } = snapshot.metadata;
  const columns = duckdbColumns(schema, partitionColumns);
  // Partition values live in the log, not the files: checksum each partition on its own.
  const byPartition = new Map<string, string[]>();
  for (const f of snapshot.files) {
    const key = JSON.stringify(f.partitionValues);
    byPartition.set(key, [...(byPartition.get(key) ?? []), join(path, f.path)]);
  }
  const sums = new Map<string, Awaited<ReturnType<typeof checksumFiles>>>();
  for (const [key, files] of byPartition) sums.set(key, await checksumFiles(engine, files, columns));
  return { snapshot, sums, files: snapshot.files.length };
}

function expectSameRows(
  before: Awaited<ReturnType<typeof tableChecksum>>,
  after: Awaited<ReturnType<typeof tableChecksum>>,
) {
  expect([...after.sums.keys()].sort()).toEqual([...before.sums.keys()].sort());
  for (const [key, sum] of before.sums) {
    const other = after.sums.get(key);
    if (!other) throw new Error(`partition ${key} is gone`);
    expect(compareChecksums(sum, other), key).toEqual([]);
  }
}

describe("crunch on Delta tables", () => {
  it("crunches COVID-19_NYT losslessly with DRR above zero, and reports the settings it chose", async () => {
    const path = join(root, "covid");
    cpSync(join(FIXTURES, "COVID-19_NYT"), path, { recursive: true });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const { ctx, progress } = context(payloadFor(path));
    const result = await runCrunch("crunch", ctx, { store, memoryLimitMb: 512 });

    expect(result).toMatchObject({ job_type: "crunch", table_version_before: 0, committed_version: 1 });
    expect(result.files_before).toBe(8);
    expect(result.rows_in).toBe(1_111_930);
    expect(result.rows_out).toBe(1_111_930);
    expect(result.drr).toBeGreaterThan(0);
    expect(result.bytes_after).toBeLessThan(result.bytes_before);
    expect(result.settings?.reason).toBeTruthy();
    expect(progress.some((p) => p.phase === "committing")).toBe(true);

    const after = await tableChecksum(store, path);
    expectSameRows(before, after);
    expect(after.files).toBe(result.files_after);
    const own = after.snapshot.commits.find((c) => c.commitInfo?.[JOB_ID_FIELD] === ctx.job.id);
    expect(own?.commitInfo?.operation).toBe("OPTIMIZE");
    // Every file the crunch wrote carries statistics readers can skip on.
    for (const f of after.snapshot.files) expect(f.stats?.numRecords).toBeGreaterThan(0);

    // A second crunch finds the table in shape and commits nothing.
    const again = await runCrunch("crunch", context(payloadFor(path)).ctx, { store, memoryLimitMb: 512 });
    expect(again.committed_version).toBeNull();
    expect(again.partitions_skipped).toBe(1);
  });

  it("crunches a partitioned table of small snappy files per partition, within the date range", async () => {
    const path = join(root, "events");
    await writeEventsTable(path, { days: 4, filesPerDay: 12, rowsPerFile: 3000 });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const { ctx } = context(
      payloadFor(path, {
        date_range: { start: "2026-01-02", end: "2026-01-03" },
        backfill_col: "event_date",
      }),
    );
    const result = await runCrunch("crunch", ctx, { store, memoryLimitMb: 512 });
    expect(result.partitions.map((p) => [p.partition, p.status, p.files_before])).toEqual([
      ["event_date=2026-01-02", "crunched", 12],
      ["event_date=2026-01-03", "crunched", 12],
    ]);
    expect(result.rows_in).toBe(2 * 12 * 3000);
    expect(result.drr).toBeGreaterThan(0);
    const after = await tableChecksum(store, path);
    expectSameRows(before, after);
    // Partitions outside the range are untouched.
    expect(after.snapshot.files.filter((f) => f.partitionValues.event_date === "2026-01-01")).toHaveLength(
      12,
    );
  });

  it("reuses the settings an earlier crunch measured, and measures again once the table's v2 choice changes", async () => {
    const path = join(root, "reuse");
    await writeEventsTable(path, { days: 3, filesPerDay: 8, rowsPerFile: 2000 });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const day = (d: string, extra: Partial<CrunchPayload> = {}) =>
      context(payloadFor(path, { date_range: { start: d, end: d }, backfill_col: "event_date", ...extra }))
        .ctx;

    // Tables this small get untried settings at the default tuning share (see the next test).
    const options = { store, memoryLimitMb: 512, tuneShare: 100 };
    const first = await runCrunch("crunch", day("2026-01-01"), options);
    expect(first.settings?.trials.length).toBeGreaterThan(0);
    expect(first.settings?.tuned_with?.parquet_v2).toBe(false);
    expect(first.phases_ms?.tune).toBeDefined();

    const second = await runCrunch("crunch", day("2026-01-02"), options);
    expect(second.settings?.reused_from_version).toBe(first.committed_version);
    expect(second.settings?.trials).toEqual([]);
    expect(second.settings?.reason).toMatch(/as measured by the crunch committed at version 1/);
    expect(second.phases_ms?.tune).toBeUndefined();
    const { reason: _r1, trials: _t1, row_group_size: _g1, ...measured } = first.settings ?? {};
    expect(second.settings).toMatchObject(measured);

    // Allowing v2 is a new question for the tuner: it measures again, v2 included.
    const third = await runCrunch("crunch", day("2026-01-03", { parquet_v2: true }), options);
    expect(third.settings?.reused_from_version).toBeUndefined();
    expect(third.settings?.tuned_with?.parquet_v2).toBe(true);
    expect(third.settings?.trials.some((t) => t.settings.endsWith("parquet v2"))).toBe(true);
    expectSameRows(before, await tableChecksum(store, path));
  });

  it("gives a crunch too small to repay trials the base settings untried, and measures nothing to reuse", async () => {
    const path = join(root, "untried");
    await writeEventsTable(path, { days: 2, filesPerDay: 8, rowsPerFile: 2000 });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const payload = payloadFor(path, {
      parquet_v2: true,
      date_range: { start: "2026-01-01", end: "2026-01-02" },
    });
    const result = await runCrunch("crunch", context(payload).ctx, { store, memoryLimitMb: 512 });
    expect(result.settings).toMatchObject({ trials: [], parquet_version: "v1", dictionary_size_limit: 6144 });
    expect(result.settings?.tuned_with).toBeUndefined();
    expect(result.settings?.reason).toMatch(/not tried against other candidates/);
    expect(result.settings?.reason).toMatch(/bytes a row in memory \(estimated from the column types/);
    expect(result.phases_ms?.tune).toBeDefined();
    expectSameRows(before, await tableChecksum(store, path));
  });

  it("keeps a concurrent append: the crunch commits after it, no row lost or doubled", async () => {
    const path = join(root, "race");
    await writeEventsTable(path, { days: 2, filesPerDay: 8, rowsPerFile: 2000 });
    const store = new HookedStore(path);
    let appended: number | undefined;
    store.beforeLogWrite = async () => {
      if (appended !== undefined) return;
      appended = await appendCommit(path, { day: "2026-01-01", rows: 500, fileIndex: 900 });
    };
    const { ctx } = context(payloadFor(path));
    const result = await runCrunch("crunch", ctx, { store, memoryLimitMb: 512 });
    expect(appended).toBe(1);
    expect(result.committed_version).toBe(2);

    const engine = await Engine.open();
    engines.push(engine);
    const snapshot = await loadSnapshot(store, engine, { scratchDir: mkdtempSync(join(root, "log-")) });
    const files = snapshot.files.map((f) => `'${join(path, f.path)}'`).join(", ");
    const [row] = await engine.query<{ n: string; ids: string }>(
      `select count(*) as n, count(distinct event_id) as ids from read_parquet([${files}])`,
    );
    // 2 x 8 x 2000 rows, plus the appended 500, each exactly once.
    expect(Number(row?.n)).toBe(32_500);
    expect(Number(row?.ids)).toBe(32_500);
  });

  it("commits once when retried after a crash before or after its commit", async () => {
    const path = join(root, "crash");
    await writeEventsTable(path, { days: 2, filesPerDay: 6, rowsPerFile: 1000 });
    const store = new HookedStore(path);
    const before = await tableChecksum(store, path);

    // Attempt 1 dies just before its commit: files written, nothing committed.
    store.beforeLogWrite = async () => {
      throw new Error("killed before the commit");
    };
    const jobId = "job_crash0000000000000001";
    await expect(
      runCrunch("crunch", context(payloadFor(path), { jobId }).ctx, { store, memoryLimitMb: 512 }),
    ).rejects.toThrow("killed before the commit");
    expectSameRows(before, await tableChecksum(store, path));

    // Attempt 2 commits, then "dies" before it can report (the commit stands).
    store.beforeLogWrite = undefined;
    const second = await runCrunch("crunch", context(payloadFor(path), { jobId }).ctx, {
      store,
      memoryLimitMb: 512,
    });
    expect(second.committed_version).toBe(1);

    // Attempt 3 finds attempt 2's commit and reports it instead of crunching again.
    const third = await runCrunch("crunch", context(payloadFor(path), { jobId }).ctx, {
      store,
      memoryLimitMb: 512,
    });
    expect(third).toMatchObject({ committed_version: 1, drr: second.drr, files_after: second.files_after });
    const after = await tableChecksum(store, path);
    expectSameRows(before, after);
    expect(after.snapshot.version).toBe(1);
  });

  it("refuses tables it can't rewrite safely, naming the reason", async () => {
    for (const name of ["simple_table_features", "table-with-dv-small", "table_with_column_mapping"]) {
      const path = join(root, name);
      cpSync(join(FIXTURES, name), path, { recursive: true });
      const run = runCrunch("crunch", context(payloadFor(path)).ctx, {
        store: new FileStore(path),
        memoryLimitMb: 256,
      });
      await expect(run, name).rejects.toMatchObject({
        retryable: false,
        message: expect.stringContaining("can't be crunched safely"),
      });
    }
  });

  it("runs as optimize when another writer committed within the mutation interval", async () => {
    const path = join(root, "busy");
    await writeEventsTable(path, { days: 1, filesPerDay: 5, rowsPerFile: 1000 });
    const store = new FileStore(path);
    const result = await runCrunch(
      "crunch",
      context(payloadFor(path, { mutation_interval_minutes: 30, cluster_columns: ["country"] })).ctx,
      {
        store,
        memoryLimitMb: 256,
      },
    );
    expect(result.job_type).toBe("optimize");
    expect(result.job_type_reason).toContain("mutation interval of 30 minutes");
    expect(result.settings?.sort_columns).toEqual([]);
    expect(result.notes).toEqual([
      expect.stringMatching(
        /^cluster columns country not applied \(files left unsorted\): the job ran as optimize \(another writer committed/,
      ),
    ]);
  });

  it("runs the full crunch once the mutation interval has passed since the other writer's commit", async () => {
    const path = join(root, "quiet");
    await writeEventsTable(path, { days: 1, filesPerDay: 5, rowsPerFile: 1000 });
    // The table's last commit was just now; the job's clock stands 31 minutes later.
    const clock = new ManualClock(new Date(Date.now() + 31 * 60_000));
    const result = await runCrunch(
      "crunch",
      context(payloadFor(path, { mutation_interval_minutes: 30 })).ctx,
      {
        store: new FileStore(path),
        memoryLimitMb: 256,
        clock,
      },
    );
    expect(result.job_type).toBe("crunch");
    expect(result.job_type_reason).toBeUndefined();
    expect(result.committed_version).not.toBeNull();
  });

  it("sorts the files it writes by the cluster columns, as read back from the written files", async () => {
    const path = join(root, "covid-cluster");
    cpSync(join(FIXTURES, "COVID-19_NYT"), path, { recursive: true });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const payload = payloadFor(path, {
      date_range: { start: "2020-01-01", end: "2021-12-31" },
      backfill_col: "date",
      cluster_columns: ["state", "date"],
      // A sorted write is one file per chunk of the bin: a small target makes several.
      target_file_size_mb: 1,
    });
    const result = await runCrunch("crunch", context(payload).ctx, { store, memoryLimitMb: 512 });
    expect(result.committed_version).toBe(1);
    expect(result.settings?.sort_columns).toEqual(["state", "date"]);
    expect(result.files_after).toBeGreaterThan(1);
    expect(result.notes).toBeUndefined();

    const after = await tableChecksum(store, path);
    expectSameRows(before, after);
    const engine = await Engine.open();
    engines.push(engine);
    const written = after.snapshot.files.map((f) => join(path, f.path));
    expect(written.length).toBe(result.files_after);
    for (const file of written) {
      // Each row against the one before it in the file's own order (file_row_number).
      const [row] = await engine.query<{ rows: string; out_of_order: string }>(
        `select count(*) as rows, count(*) filter (where prev_state > state or (prev_state = state and prev_date > date)) as out_of_order
         from (select state, date, lag(state) over w as prev_state, lag(date) over w as prev_date
               from read_parquet(${sqlString(file)}, file_row_number = true) window w as (order by file_row_number))`,
      );
      expect(Number(row?.rows)).toBeGreaterThan(0);
      expect(Number(row?.out_of_order), file).toBe(0);
    }
    // The source files were in date order, not state order: the check above can fail.
    const [source] = await engine.query<{ out_of_order: string }>(
      `select count(*) filter (where prev_state > state or (prev_state = state and prev_date > date)) as out_of_order
       from (select state, date, lag(state) over w as prev_state, lag(date) over w as prev_date
             from read_parquet(${sqlString(join(FIXTURES, "COVID-19_NYT", before.snapshot.files[0]?.path ?? ""))}, file_row_number = true)
             window w as (order by file_row_number))`,
    );
    expect(Number(source?.out_of_order)).toBeGreaterThan(0);
  });

  it("Z-orders the files it writes when the job names a zorder layout, over the cluster columns, every row intact", async () => {
    const path = join(root, "zorder");
    await writeEventsTable(path, { days: 2, filesPerDay: 8, rowsPerFile: 4000 });
    const store = new FileStore(path);
    const before = await tableChecksum(store, path);
    const payload = payloadFor(path, {
      cluster_columns: ["country"],
      layout: { type: "zorder", columns: ["customer_id", "sku"] },
    });
    const result = await runCrunch("crunch", context(payload).ctx, { store, memoryLimitMb: 512 });
    expect(result.committed_version).toBe(1);
    expect(result.rows_out).toBe(2 * 8 * 4000);
    expect(result.settings).toMatchObject({ sort_columns: ["customer_id", "sku"], sort_layout: "zorder" });
    expect(result.notes).toBeUndefined();
    const after = await tableChecksum(store, path);
    expectSameRows(before, after);
    const written = after.snapshot.files.filter((f) => f.tags?.["lakesmith.settings"]);
    expect(written.length).toBe(after.snapshot.files.length);
    for (const f of written)
      expect(f.tags?.["lakesmith.settings"]).toMatch(/;sort=zorder\(customer_id,sku\);/);
  });

  it("refuses a layout column the table doesn't have, naming it; an optimize pass says the layout was not applied", async () => {
    const path = join(root, "zorder-refusals");
    await writeEventsTable(path, { days: 1, filesPerDay: 3, rowsPerFile: 200 });
    const store = new FileStore(path);
    const unknown = runCrunch(
      "crunch",
      context(payloadFor(path, { layout: { type: "zorder", columns: ["customer_id", "nope"] } })).ctx,
      { store, memoryLimitMb: 256 },
    );
    await expect(unknown).rejects.toMatchObject({
      retryable: false,
      message: "zorder layout column nope not in the table's data columns",
    });
    const optimized = await runCrunch(
      "optimize",
      context(payloadFor(path, { layout: { type: "zorder", columns: ["customer_id", "sku"] } })).ctx,
      { store, memoryLimitMb: 256 },
    );
    expect(optimized.settings?.sort_columns).toEqual([]);
    expect(optimized.notes).toEqual([
      "layout zorder(customer_id,sku) not applied (files left unsorted): the job ran as optimize (asked for), which never re-sorts",
    ]);
  });

  it("succeeds with zeros and says so when no file falls in the date range, naming the range", async () => {
    const path = join(root, "empty-range");
    await writeEventsTable(path, { days: 2, filesPerDay: 3, rowsPerFile: 500 });
    const store = new FileStore(path);
    const result = await runCrunch(
      "crunch",
      context(
        payloadFor(path, {
          date_range: { start: "2030-01-01", end: "2030-01-15" },
          backfill_col: "event_date",
        }),
      ).ctx,
      { store, memoryLimitMb: 256 },
    );
    expect(result).toMatchObject({ committed_version: null, files_before: 0, files_after: 0, rows_in: 0 });
    expect(result.partitions).toEqual([]);
    expect(result.notes).toEqual([
      "no file fell in the range 2030-01-01 to 2030-01-15 (inclusive) of column event_date: nothing to crunch among the table's 6 files",
    ]);
  });

  it("refuses a cluster column the table doesn't have", async () => {
    const path = join(root, "cluster");
    await writeEventsTable(path, { days: 1, filesPerDay: 2, rowsPerFile: 100 });
    const run = runCrunch("crunch", context(payloadFor(path, { cluster_columns: ["nope"] })).ctx, {
      store: new FileStore(path),
      memoryLimitMb: 256,
    });
    await expect(run).rejects.toMatchObject({ retryable: false, message: expect.stringContaining("nope") });
  });

  it("does not commit when cancelled", async () => {
    const path = join(root, "cancel");
    await writeEventsTable(path, { days: 2, filesPerDay: 4, rowsPerFile: 1000 });
    const store = new HookedStore(path);
    const controller = new AbortController();
    const { ctx } = context(payloadFor(path), { signal: controller.signal });
    ctx.progress = (p) => {
      if (p.phase === "rewriting") controller.abort(new Error("cancelled"));
    };
    await expect(runCrunch("crunch", ctx, { store, memoryLimitMb: 256 })).rejects.toThrow();
    const engine = await Engine.open();
    engines.push(engine);
    expect((await loadSnapshot(store, engine, { scratchDir: mkdtempSync(join(root, "log-")) })).version).toBe(
      0,
    );
  });
});

describe("onboarding inspection", () => {
  it("reports COVID-19_NYT's recipe and the events table's partition pattern", async () => {
    const covid = join(root, "inspect-covid");
    cpSync(join(FIXTURES, "COVID-19_NYT"), covid, { recursive: true });
    const recipe = await runInspection(
      context({ table_id: "t", uri: `file://${covid}`, format: "delta" as const }).ctx,
      { store: new FileStore(covid), memoryLimitMb: 256 },
    );
    expect(recipe).toMatchObject({
      partition_columns: [],
      partition_pattern: null,
      date_filter_column: "date",
    });
    expect(recipe.enumerated_columns).toContain("state");

    const events = join(root, "inspect-events");
    await writeEventsTable(events, { days: 3, filesPerDay: 2, rowsPerFile: 2000 });
    const eventsRecipe = await runInspection(
      context({ table_id: "t", uri: `file://${events}`, format: "delta" as const }).ctx,
      { store: new FileStore(events), memoryLimitMb: 256 },
    );
    expect(eventsRecipe).toMatchObject({
      partition_columns: ["event_date"],
      partition_pattern: "event_date=YYYY-MM-DD",
      date_filter_column: "event_date",
    });
    expect(eventsRecipe.enumerated_columns).toEqual(expect.arrayContaining(["country", "status"]));
  });

  it("fails with the reason for a table it refuses", async () => {
    const path = join(root, "inspect-features");
    cpSync(join(FIXTURES, "simple_table_features"), path, { recursive: true });
    await expect(
      runInspection(context({ table_id: "t", uri: `file://${path}`, format: "delta" as const }).ctx, {
        store: new FileStore(path),
        memoryLimitMb: 256,
      }),
    ).rejects.toMatchObject({
      retryable: false,
      message: expect.stringContaining("can't be managed safely"),
    });
  });
});
