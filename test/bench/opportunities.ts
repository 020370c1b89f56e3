/**
 * `npm run bench:opportunities`: what an opportunity scan costs, and how close its potential
 * DRR comes to what a crunch then saves.
 *
 * An events table of BENCH_DAYS x BENCH_FILES_PER_DAY small snappy files (default 8 x 50 = 400 files of
 * BENCH_ROWS_PER_FILE rows, default 40,000: about 300 MB, the crunch bench's table) is scanned
 * BENCH_REPEAT times (default 3) by the agent's handler in this process, with the default sample
 * bounds (16 files, 256 MB) and a 128 MB target; then crunched whole once (`runCrunch`), and scanned
 * again. Printed: each scan's wall time and the sample it rewrote (median of the rounds), the
 * potential DRR against the crunch's DRR over the same table, the figures after the crunch, and this
 * process's peak RSS (VmHWM). Memory limit BENCH_MEMORY_LIMIT_MB (default 768), as the agent's.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpportunityScanPayloadSchema } from "@lakesmith/shared/opportunities";
import { pino } from "pino";
import { runCrunch } from "../../agent/src/crunch/run.ts";
import { runOpportunityScan } from "../../agent/src/opportunities/run.ts";
import type { JobContext } from "../../agent/src/registry.ts";
import { FileStore } from "../../agent/src/store/index.ts";
import { writeEventsTable } from "../support/delta-tables.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 8);
const FILES_PER_DAY = Number(process.env.BENCH_FILES_PER_DAY ?? 50);
const ROWS_PER_FILE = Number(process.env.BENCH_ROWS_PER_FILE ?? 40_000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const MEMORY_LIMIT_MB = Number(process.env.BENCH_MEMORY_LIMIT_MB ?? 768);
const MB = 2 ** 20;

const root = mkdtempSync(join(tmpdir(), "bench-opportunities-"));
let jobs = 0;

function context<P>(kind: string, payload: P): JobContext<P> {
  const id = `job_bench_${++jobs}`;
  return {
    job: {
      id,
      kind,
      fence: 1,
      attempt: 1,
      priority: "P2",
      table_id: "tbl_bench",
      payload: payload as Record<string, unknown>,
    },
    payload,
    signal: new AbortController().signal,
    scratchDir: mkdtempSync(join(root, "scratch-")),
    progress: () => {},
    part: () => Promise.reject(new Error("no parts")),
    log: pino({ level: "silent" }),
  };
}

const peakRssMb = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function scan(path: string) {
  const payload = OpportunityScanPayloadSchema.parse({
    table_id: "tbl_bench",
    uri: `file://${path}`,
    format: "delta",
    target_file_size_mb: 128,
    recipe: {
      partition_columns: ["event_date"],
      partition_pattern: "event_date=YYYY-MM-DD",
      date_filter_column: "event_date",
      cluster_columns: ["customer_id"],
      enumerated_columns: ["country", "status"],
    },
  });
  const started = performance.now();
  const result = await runOpportunityScan(context("opportunity_scan", payload), {
    store: new FileStore(path),
    memoryLimitMb: MEMORY_LIMIT_MB,
  });
  return { result, ms: performance.now() - started };
}

try {
  const path = join(root, "events");
  const generated = await writeEventsTable(path, {
    days: DAYS,
    filesPerDay: FILES_PER_DAY,
    rowsPerFile: ROWS_PER_FILE,
  });
  console.log(
    `table: ${generated.files} files, ${(generated.bytes / MB).toFixed(1)} MB, ${generated.rows} rows`,
  );
  const rounds = [];
  for (let i = 0; i < REPEAT; i++) rounds.push(await scan(path));
  const ms = median(rounds.map((r) => r.ms));
  const first = rounds[0]?.result;
  if (!first) throw new Error("no scan ran");
  const sampleMb = first.sample.bytes / MB;
  console.log(
    `scan: median ${(ms / 1000).toFixed(2)} s over ${REPEAT} (${rounds.map((r) => (r.ms / 1000).toFixed(2)).join(", ")}); ` +
      `sample ${first.sample.files} files / ${sampleMb.toFixed(1)} MB (${(sampleMb / (ms / 1000)).toFixed(1)} MB/s), ` +
      `potential DRR ${first.potential_drr_percent}% (${rounds.map((r) => r.result.potential_drr_percent).join(", ")}); ` +
      `small files ${first.small_files}/${first.files}; missing ordering ${first.missing_ordering}`,
  );
  console.log(`method: ${first.method}`);
  const crunchStarted = performance.now();
  const crunched = await runCrunch(
    "crunch",
    context("crunch", {
      table_id: "tbl_bench",
      uri: `file://${path}`,
      format: "delta" as const,
      target_file_size_mb: 128,
      cluster_columns: ["customer_id"],
    }),
    { store: new FileStore(path), memoryLimitMb: MEMORY_LIMIT_MB },
  );
  console.log(
    `crunch: ${((performance.now() - crunchStarted) / 1000).toFixed(1)} s, DRR ${crunched.drr.toFixed(2)}% ` +
      `(${(crunched.bytes_before / MB).toFixed(1)} MB -> ${(crunched.bytes_after / MB).toFixed(1)} MB, ${crunched.files_before} -> ${crunched.files_after} files); ` +
      `potential DRR was ${first.potential_drr_percent}%`,
  );
  const after = await scan(path);
  console.log(
    `scan after crunch: ${(after.ms / 1000).toFixed(2)} s; version ${after.result.table_version}, small files ` +
      `${after.result.small_files}/${after.result.files}, potential DRR ${after.result.potential_drr_percent}%, ` +
      `missing ordering ${after.result.missing_ordering}`,
  );
  console.log(`peak RSS of this process: ${peakRssMb().toFixed(0)} MB`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
