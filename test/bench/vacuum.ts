/**
 * `npm run bench:vacuum`: the plans of vacuum (full mode) and partition expiration (dry run) on a
 * `file://` Delta table of BENCH_FILES objects (default 100,000), each timed in a fresh process with
 * its peak RSS (Linux `VmHWM`). Targets: under 30 s and under 500 MB each.
 *
 * The table looks like a big table a while into its life: 365 daily partitions; 70% of the objects
 * live files, 20% tombstones (removed over the last 30 days, so some inside the 7-day retention and
 * most past it), 10% orphans (half older than the orphan age) and one `.crc` beside every 100th
 * file. The log is a first commit of every add, removes spread over 20 commits, a classic checkpoint
 * after them, and a few JSON commits past the checkpoint. Data files are zero-filled placeholders:
 * both plans only list the store and read the log. BENCH_DIR keeps (and reuses) the table.
 *
 * Then the Iceberg vacuum's plan (dry run, full mode: snapshot expiry and orphans) on an Iceberg
 * table whose snapshots hold BENCH_ICEBERG_ENTRIES manifest entries in all (default 100,000): a
 * first append of half of them, then replace commits, each removing a slice of the live files and
 * adding new ones, a day apart, so that the older snapshots expire under the 5-day default and
 * their files are proposed. Data files are placeholders here too.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PartitionExpirationPayloadSchema, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { pino } from "pino";
import { commitKey, loadSnapshot, writeCheckpoint } from "../../agent/src/delta/index.ts";
import { Engine } from "../../agent/src/engine/index.ts";
import {
  commitReplace,
  loadIcebergTable,
  type NewDataFile,
  parseJson,
  readSnapshotFiles,
  stringifyJson,
} from "../../agent/src/iceberg/index.ts";
import { runPartitionExpiration } from "../../agent/src/maintenance/expire.ts";
import { runVacuum } from "../../agent/src/maintenance/vacuum.ts";
import type { JobContext } from "../../agent/src/registry.ts";
import { FileStore } from "../../agent/src/store/index.ts";
import { writeIcebergTable } from "../../agent/test/support/iceberg-tables.ts";
import { benchFolder, exitOnInterrupt } from "./lifecycle.ts";

const FILES = Number(process.env.BENCH_FILES ?? 100_000);
const ICEBERG_ENTRIES = Number(process.env.BENCH_ICEBERG_ENTRIES ?? 100_000);
const ICEBERG_COMMITS = 10;
const DAYS = 365;
const FIRST_DAY = Date.parse("2025-01-01T00:00:00Z");
const DAY = 86_400_000;
const PLACEHOLDER = Buffer.alloc(64);
const REMOVE_COMMITS = 20;
const TAIL_COMMITS = 5;
const TARGET_SECONDS = 30;
const TARGET_MB = 500;

interface Measured {
  plan: string;
  seconds: number;
  peakRssMb: number;
  summary: string;
}

async function main() {
  const [flag, plan, dir] = process.argv.slice(2);
  if (flag === "--measure" && plan && dir) return measure(plan, dir);

  // A table of our own is removed however the run ends; one in BENCH_DIR is kept for the next run.
  exitOnInterrupt();
  const own = process.env.BENCH_DIR ? undefined : benchFolder("lakesmith-bench-vacuum-");
  const path = own ? join(own, "table") : (process.env.BENCH_DIR as string);
  try {
    if (!existsSync(join(path, "_delta_log"))) {
      const t0 = performance.now();
      await buildTable(path);
      console.log(
        `built ${FILES.toLocaleString("en")} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s at ${path}`,
      );
    }
    const rows = ["vacuum", "expire"].map((p) => child(p, path));
    const iceberg = `${path}-iceberg`;
    if (!existsSync(join(iceberg, "metadata"))) {
      const t0 = performance.now();
      const entries = await buildIcebergTable(iceberg);
      console.log(
        `built an Iceberg table of ${entries.toLocaleString("en")} manifest entries in ${((performance.now() - t0) / 1000).toFixed(1)} s at ${iceberg}`,
      );
    }
    rows.push(child("iceberg", iceberg));
    console.log("\nplan                          seconds   peak RSS   result");
    for (const r of rows)
      console.log(
        `${r.plan.padEnd(28)}${r.seconds.toFixed(2).padStart(9)}${`${r.peakRssMb} MB`.padStart(11)}   ${r.summary}`,
      );
    console.log(`targets: < ${TARGET_SECONDS} s and < ${TARGET_MB} MB each`);
    if (rows.some((r) => r.seconds >= TARGET_SECONDS || r.peakRssMb >= TARGET_MB)) process.exitCode = 1;
  } finally {
    if (own) rmSync(own, { recursive: true, force: true });
  }
}

/** Runs one plan in a fresh process, so its peak RSS is its own. */
function child(plan: string, path: string): Measured {
  const out = spawnSync(
    process.execPath,
    [...process.execArgv, import.meta.filename, "--measure", plan, path],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  if (out.status !== 0) throw new Error(`the ${plan} plan failed (exit ${out.status})`);
  return JSON.parse(out.stdout.trim().split("\n").at(-1) as string) as Measured;
}

async function measure(plan: string, path: string): Promise<void> {
  const store = new FileStore(path);
  exitOnInterrupt();
  const scratch = benchFolder("lakesmith-bench-scratch-");
  const ctx = <P>(kind: string, payload: P): JobContext<P> => ({
    job: { id: `bench-${kind}`, kind, fence: 1, attempt: 1, priority: "P2", table_id: "bench", payload: {} },
    payload,
    signal: new AbortController().signal,
    scratchDir: scratch,
    progress: () => {},
    part: () => Promise.reject(new Error("the vacuum bench's jobs send no parts")),
    log: pino({ level: "silent" }),
  });
  const table = { table_id: "bench", uri: store.uri, format: plan === "iceberg" ? "iceberg" : "delta" };
  const t0 = performance.now();
  let summary: string;
  let seconds: number;
  try {
    if (plan === "iceberg") {
      const result = await runVacuum(
        ctx("vacuum", VacuumPayloadSchema.parse({ ...table, mode: "full", dry_run: true })),
        { store, memoryLimitMb: 256 },
      );
      summary = `${result.expired_snapshots?.length ?? 0} snapshots expire, ${result.files_count} proposed (${count(result.files, "expired_snapshot")} of expired snapshots, ${count(result.files, "orphan")} orphans), ${result.objects_listed} listed`;
    } else if (plan === "vacuum") {
      const result = await runVacuum(
        ctx("vacuum", VacuumPayloadSchema.parse({ ...table, mode: "full", dry_run: true })),
        { store, memoryLimitMb: 256 },
      );
      summary = `${result.objects_listed} listed, ${result.files_count} proposed (${count(result.files, "tombstone")} tombstones, ${count(result.files, "orphan")} orphans), kept ${JSON.stringify(result.kept)}`;
    } else {
      const result = await runPartitionExpiration(
        ctx(
          "partition_expiration",
          PartitionExpirationPayloadSchema.parse({
            ...table,
            partition_column: "event_date",
            as_of: "2026-01-01",
            retention_days: 180,
            dry_run: true,
          }),
        ),
        { store, memoryLimitMb: 256 },
      );
      summary = `${result.partitions.length} partitions, ${result.files_count} files before ${result.cutoff_date}`;
    }
    seconds = (performance.now() - t0) / 1000;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const names = {
    vacuum: "vacuum plan (full)",
    expire: "expiration plan (dry run)",
    iceberg: "Iceberg vacuum plan (full)",
  };
  const row: Measured = { plan: names[plan as keyof typeof names], seconds, peakRssMb: peakRssMb(), summary };
  console.log(JSON.stringify(row));
}

function count(files: readonly { reason: string }[], reason: string): number {
  return files.filter((f) => f.reason === reason).length;
}

/** Peak resident memory of this process (Linux `VmHWM`), in MB. */
function peakRssMb(): number {
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1]);
  return Math.round((Number.isNaN(kb) ? process.resourceUsage().maxRSS : kb) / 1024);
}

async function buildTable(path: string): Promise<void> {
  const live = Math.round(FILES * 0.7);
  const removed = Math.round(FILES * 0.2);
  const orphans = FILES - live - removed - Math.ceil((live + removed) / 100) - TAIL_COMMITS;
  const now = Date.now();
  const dayOf = (i: number) => new Date(FIRST_DAY + (i % DAYS) * DAY).toISOString().slice(0, 10);
  const keyOf = (i: number) =>
    `event_date=${dayOf(i)}/part-${String(i).padStart(6, "0")}-c000.snappy.parquet`;
  for (let d = 0; d < DAYS; d++) mkdirSync(join(path, `event_date=${dayOf(d)}`), { recursive: true });
  mkdirSync(join(path, "_delta_log"));

  const adds: string[] = [];
  for (let i = 0; i < live + removed; i++) {
    const key = keyOf(i);
    writeFileSync(join(path, key), PLACEHOLDER);
    if (i % 100 === 0) writeFileSync(join(path, `event_date=${dayOf(i)}/.part-${i}.crc`), PLACEHOLDER);
    adds.push(
      JSON.stringify({
        add: {
          path: key,
          partitionValues: { event_date: dayOf(i) },
          size: PLACEHOLDER.length,
          modificationTime: now - 40 * DAY,
          dataChange: true,
          stats: JSON.stringify({
            numRecords: 1000,
            minValues: { id: i * 1000 },
            maxValues: { id: i * 1000 + 999 },
          }),
        },
      }),
    );
  }
  const schema = {
    type: "struct",
    fields: [
      { name: "id", type: "long", nullable: true, metadata: {} },
      { name: "event_date", type: "string", nullable: true, metadata: {} },
    ],
  };
  const header = [
    { commitInfo: { timestamp: now - 40 * DAY, operation: "WRITE" } },
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: "bench-vacuum",
        format: { provider: "parquet", options: {} },
        schemaString: JSON.stringify(schema),
        partitionColumns: ["event_date"],
        configuration: {},
        createdTime: now - 40 * DAY,
      },
    },
  ].map((a) => JSON.stringify(a));
  writeFileSync(join(path, commitKey(0)), `${[...header, ...adds].join("\n")}\n`);

  // Removes of the last `removed` files, oldest first, spread over the last 30 days.
  const perCommit = Math.ceil(removed / REMOVE_COMMITS);
  for (let c = 0; c < REMOVE_COMMITS; c++) {
    const at = now - 30 * DAY + Math.round((c * 30 * DAY) / REMOVE_COMMITS);
    const lines = [JSON.stringify({ commitInfo: { timestamp: at, operation: "DELETE" } })];
    for (let i = live + c * perCommit; i < Math.min(live + removed, live + (c + 1) * perCommit); i++)
      lines.push(
        JSON.stringify({
          remove: { path: keyOf(i), deletionTimestamp: at, dataChange: true, size: PLACEHOLDER.length },
        }),
      );
    writeFileSync(join(path, commitKey(c + 1)), `${lines.join("\n")}\n`);
  }

  const store = new FileStore(path);
  const engine = await Engine.open({ memoryLimitMb: 1024 });
  const scratch = benchFolder("lakesmith-bench-build-");
  try {
    const snapshot = await loadSnapshot(store, engine, { scratchDir: scratch });
    // The checkpoint keeps every tombstone (as one written when the oldest remove was fresh would).
    await writeCheckpoint(store, engine, snapshot, {
      scratchDir: scratch,
      clock: { now: () => new Date(now - 30 * DAY) },
    });
  } finally {
    engine.close();
    rmSync(scratch, { recursive: true, force: true });
  }
  // Appends after the checkpoint: the snapshot is the checkpoint plus a JSON tail.
  for (let c = 0; c < TAIL_COMMITS; c++) {
    const at = now - (TAIL_COMMITS - c) * 3_600_000;
    const key = `event_date=${dayOf(DAYS - 1)}/part-tail-${c}-c000.snappy.parquet`;
    writeFileSync(join(path, key), PLACEHOLDER);
    const add = { path: key, partitionValues: { event_date: dayOf(DAYS - 1) }, size: PLACEHOLDER.length };
    const lines = [
      { commitInfo: { timestamp: at, operation: "WRITE" } },
      { add: { ...add, modificationTime: at, dataChange: true, stats: JSON.stringify({ numRecords: 10 }) } },
    ];
    writeFileSync(
      join(path, commitKey(REMOVE_COMMITS + 1 + c)),
      `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`,
    );
  }

  const oldEnough = new Date(now - 10 * DAY);
  for (let o = 0; o < orphans; o++) {
    const file = join(
      path,
      `event_date=${dayOf(o)}/part-orphan-${String(o).padStart(6, "0")}.snappy.parquet`,
    );
    writeFileSync(file, PLACEHOLDER);
    if (o % 2 === 0) utimesSync(file, oldEnough, oldEnough);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

/**
 * The Iceberg table (see the module comment); returns the manifest entries its snapshots hold in
 * all. Placeholder data files, written as the commits add them.
 */
async function buildIcebergTable(path: string): Promise<number> {
  const store = new FileStore(path);
  await writeIcebergTable({
    dir: path,
    columns: [{ name: "id", type: "long", sql: "i" }],
    partition: [],
    rows: 1,
    files: 1,
  });
  const start = Date.now() - (ICEBERG_COMMITS + 3) * DAY;
  // The writer committed its one file now; that snapshot is moved back before the others, which
  // are committed a day apart from `start` (a commit's time never precedes the last update's).
  const written = await loadIcebergTable(store);
  const file = join(path, written.metadataKey);
  const json = parseJson(readFileSync(file, "utf8")) as {
    "last-updated-ms": number;
    snapshots: { "timestamp-ms": number }[];
    "snapshot-log": { "timestamp-ms": number }[];
  };
  json["last-updated-ms"] = start - DAY;
  for (const s of [...json.snapshots, ...json["snapshot-log"]]) s["timestamp-ms"] = start - DAY;
  writeFileSync(file, stringifyJson(json, 2));
  const first = Math.round(ICEBERG_ENTRIES / 2);
  const perCommit = Math.round((ICEBERG_ENTRIES - first) / ICEBERG_COMMITS);
  let entries = 1;
  let n = 0;
  const placeholders = async (count: number): Promise<NewDataFile[]> => {
    const files: NewDataFile[] = [];
    for (let i = 0; i < count; i++) {
      const key = `data/part-${String(n++).padStart(7, "0")}.parquet`;
      mkdirSync(join(path, "data"), { recursive: true });
      writeFileSync(join(path, key), PLACEHOLDER);
      files.push({
        key,
        fileSizeInBytes: PLACEHOLDER.length,
        recordCount: 100,
        specId: 0,
        partition: new Map(),
        valueCounts: new Map(),
        nullValueCounts: new Map(),
        lowerBounds: new Map(),
        upperBounds: new Map(),
      });
    }
    return files;
  };
  for (let c = 0; c <= ICEBERG_COMMITS; c++) {
    const table = await loadIcebergTable(store);
    const base = await readSnapshotFiles(store, table);
    const live = base.entries.filter((e) => e.content === "data");
    // The first commit appends half of the entries; each later one replaces as many as it adds.
    const removed = c === 0 ? [] : live.slice(0, Math.round(perCommit / 2));
    const added = await placeholders(c === 0 ? first : Math.round(perCommit / 2));
    const outcome = await commitReplace(store, table, {
      base,
      removed,
      added,
      summary: {},
      nowMs: start + c * DAY,
    });
    if (!outcome.committed) throw new Error("the bench's own commit lost a race");
    entries += added.length + removed.length;
  }
  return entries;
}
