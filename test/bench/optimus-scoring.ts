/**
 * `npm run bench:optimus:scoring`: what one Optimus `layout_scoring` job costs on a 1 million-row
 * sample (the scoring half of the Optimus bench; target: under 10 s).
 *
 * An events table of BENCH_DAYS x BENCH_FILES_PER_DAY snappy files of BENCH_ROWS_PER_FILE rows
 * (default 10 x 20 x 5,000 = 1,000,000 rows, 200 files; `test/support/delta-tables.ts`) is scored
 * BENCH_REPEAT times (default 3) by the agent's scoring in this process, against a workload of
 * BENCH_FILTER_SETS filter sets (default 300) over seven days: ranges on `event_ts`, `amount` and
 * `event_id`, equalities on `customer_id`, `sku` lists, and the `event_date` partition with the
 * low-cardinality `country` (least bytes). The whole table is the sample (sample_max_rows 1,000,000): the
 * current order and 10 candidate layouts (5 linear, 2 compound, 3 Z-orders) are simulated as 200
 * pseudo-files each. Printed per round: wall and CPU seconds (user + system, DuckDB's threads
 * included); then the median, the candidates and the recommendation, and the peak RSS (VmHWM).
 * Memory limit BENCH_MEMORY_LIMIT_MB (default 768), as the agent's.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LayoutScoringPayloadSchema, type OptimusFilterSet } from "@lakesmith/shared/optimus";
import { describeLayout } from "../../agent/src/optimus/scoring/candidates.ts";
import { runLayoutScoring } from "../../agent/src/optimus/scoring/run.ts";
import { FileStore } from "../../agent/src/store/index.ts";
import { jobContext } from "../../agent/test/support/maintenance.ts";
import { writeEventsTable } from "../support/delta-tables.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 10);
const FILES_PER_DAY = Number(process.env.BENCH_FILES_PER_DAY ?? 20);
const ROWS_PER_FILE = Number(process.env.BENCH_ROWS_PER_FILE ?? 5_000);
const FILTER_SETS = Number(process.env.BENCH_FILTER_SETS ?? 300);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const MEMORY_LIMIT_MB = Number(process.env.BENCH_MEMORY_LIMIT_MB ?? 768);
const GB = 2 ** 30;

const root = mkdtempSync(join(tmpdir(), "bench-optimus-scoring-"));

const peakRssMb = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** A deterministic workload: filter set i takes its shape from i and its literals from a small LCG. */
function workload(): OptimusFilterSet[] {
  let seed = 12_345;
  const next = (n: number) => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };
  const day = (d: number) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10);
  // Shape i % 6, its bytes weighted so the five most filtered columns are the high-cardinality ones.
  const shapes: [number, () => OptimusFilterSet["predicates"]][] = [
    [
      6,
      () => {
        const d = next(DAYS);
        return [
          { column: "event_ts", op: ">=", values: [`${day(d)} ${String(next(24)).padStart(2, "0")}:00:00`] },
          { column: "event_ts", op: "<", values: [`${day(d + 1)} 00:00:00`] },
        ];
      },
    ],
    [5, () => [{ column: "customer_id", op: "=", values: [String(next(50_000))] }]],
    [
      4,
      () => [
        {
          column: "sku",
          op: "in",
          values: [0, 1, 2].map(() => `SKU-${String(next(2_000)).padStart(5, "0")}`),
        },
      ],
    ],
    [3, () => [{ column: "amount", op: ">=", values: [`${next(3_000)}.50`] }]],
    [2, () => [{ column: "event_id", op: "<", values: [String(20_454 * 100_000_000 + next(100_000))] }]],
    [
      1,
      () => [
        { column: "event_date", op: "=", values: [day(next(DAYS))] },
        { column: "country", op: "=", values: ["DE"] },
      ],
    ],
  ];
  return Array.from({ length: FILTER_SETS }, (_, i) => {
    const [weight, shape] = shapes[i % shapes.length] as (typeof shapes)[number];
    const predicates = shape();
    const days = Object.fromEntries(
      [0, 1, 2, 3, 4, 5, 6].map((d) => [
        day(20 + d),
        { queries: 1 + next(5), bytes_scanned: next(50) * weight * GB },
      ]),
    );
    const volumes = Object.values(days);
    return {
      predicates,
      columns: predicates.map((p) => p.column),
      queries: volumes.reduce((n, v) => n + v.queries, 0),
      bytes_scanned: volumes.reduce((n, v) => n + v.bytes_scanned, 0),
      days,
      examples: [],
    };
  });
}

async function main() {
  const path = join(root, "events");
  const table = await writeEventsTable(path, {
    days: DAYS,
    filesPerDay: FILES_PER_DAY,
    rowsPerFile: ROWS_PER_FILE,
  });
  console.log(`table: ${table.files} files, ${table.rows} rows, ${(table.bytes / 2 ** 20).toFixed(1)} MB`);
  const payload = LayoutScoringPayloadSchema.parse({
    submission_id: "sub_bench",
    run_id: "job_bench_run",
    table_fqn: "bench.events",
    table_id: "tbl_bench",
    uri: `file://${path}`,
    format: "delta",
    current_layout: null,
    filter_sets: workload(),
    sample_max_rows: 1_000_000,
  });
  const walls: number[] = [];
  const cpus: number[] = [];
  let last: Awaited<ReturnType<typeof runLayoutScoring>> | undefined;
  for (let round = 1; round <= REPEAT; round++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    last = await runLayoutScoring(jobContext(root, "layout_scoring", payload), {
      store: new FileStore(path),
      memoryLimitMb: MEMORY_LIMIT_MB,
    });
    const wall = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    walls.push(wall);
    cpus.push(cpuSeconds);
    console.log(`round ${round}: wall ${wall.toFixed(2)} s, CPU ${cpuSeconds.toFixed(2)} s`);
  }
  if (!last) return;
  console.log(
    `median: wall ${median(walls).toFixed(2)} s, CPU ${median(cpus).toFixed(2)} s ` +
      `(sample ${last.sample_rows} rows, ${last.pseudo_files} pseudo-files, ${last.candidates.length - 1} candidates ` +
      `besides the current, ${FILTER_SETS} filter sets); target: wall under 10 s`,
  );
  for (const c of last.candidates)
    console.log(`  ${describeLayout(c.layout).padEnd(40)} ${c.skip_fraction.toFixed(3)}`);
  console.log(`current measured on the files' statistics: ${last.current.measured_skip_fraction}`);
  console.log(`recommendation: ${last.recommendation?.reason ?? last.no_recommendation_reason}`);
  console.log(`peak RSS: ${peakRssMb().toFixed(0)} MB`);
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(root, { recursive: true, force: true }));
