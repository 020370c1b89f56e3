/**
 * `npm run bench:crunch`: crunch through the whole system against a plain DuckDB rewrite.
 *
 * For each scale and table, BENCH_REPEAT (default 5) rounds run in turn. A round takes a fresh copy
 * of the table, rewrites its files with a plain `COPY (select * from read_parquet(files)) TO ...
 * (FORMAT parquet, COMPRESSION zstd)`, then registers the copy through the API, onboards it and
 * crunches it whole (`{"whole_table": true}`) with a `lakesmith-agent` child process (the control
 * plane runs in this process on a libSQL file). Plain and crunch alternate, so that load from other
 * work on a shared machine weighs on both sides alike, and the figures are medians over the rounds:
 * one stall on a 2-core machine moves a single run by 20% or more. Printed per table and scale: input
 * MB, MB/s of both (crunch: the job's own duration, from loading the log to the commit, validation
 * included), the wall ratio (plain's time over the crunch's) and the CPU ratio (the agent process's
 * CPU seconds over plain's: contention inflates CPU time far less than wall time), each the median of
 * the rounds' ratios with their range, DRR of both, the settings crunch chose and why, the phases of
 * the median round, and the agent's peak RSS while crunching (VmHWM, reset before each crunch; the
 * peak while onboarding, which profiles the table, is printed apart).
 *
 * BENCH_SCALE (comma-separated, default 1) multiplies the events table's files per day: `1,4,8` runs
 * the three sizes in turn, each with a fresh agent. BENCH_TABLES (comma-separated, default
 * `events,covid,iceberg`) picks the tables; the COVID fixture runs at the first scale only. All are
 * registered with `parquet_v2: true`, as a user whose readers all accept Parquet v2 pages (Spark 3,
 * Trino, DuckDB) would register them; crunch still keeps v2 only where its sample measures better.
 * BENCH_PARQUET_V2=0 registers them with the default (v1 only).
 *
 * Tables: an events table of BENCH_DAYS x BENCH_FILES_PER_DAY small snappy files (default 8 x 50 =
 * 400 files at 1x, BENCH_ROWS_PER_FILE rows each, default 40,000: about 300 MB of timestamps,
 * low-cardinality strings, ids and decimals), the COVID-19_NYT fixture, and an Iceberg table of the same
 * shape: as many files (snappy, partitioned by day(event_ts), appended in 8 snapshots) and rows as
 * the events table at each scale, written by the test support's Iceberg writer. Targets (issues 5,
 * 17 and 18): wall ratio >= 0.8 and CPU ratio <= 1.25 at every scale; crunch DRR >= plain DRR + 10 points;
 * agent peak RSS < 800 MB. The bench removes its folder and stops its agents and server when done,
 * then exits.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadSnapshot } from "../../agent/src/delta/index.ts";
import { Engine, sqlList, sqlString } from "../../agent/src/engine/index.ts";
import { loadIcebergTable, readSnapshotFiles } from "../../agent/src/iceberg/index.ts";
import { FileStore } from "../../agent/src/store/index.ts";
import { DELTA_FIXTURES } from "../../agent/test/support/fixtures.ts";
import { copyIcebergTable } from "../../agent/test/support/iceberg.ts";
import { writeIcebergTable } from "../../agent/test/support/iceberg-tables.ts";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { spawnAgent } from "../support/agents.ts";
import { writeEventsTable } from "../support/delta-tables.ts";

const DAYS = Number(process.env.BENCH_DAYS ?? 8);
const FILES_PER_DAY = Number(process.env.BENCH_FILES_PER_DAY ?? 50);
/**
 * Size knobs: each scale multiplies the events table's files per day, so its partitions (and the
 * crunch's bins, up to the agent's bin size) grow with it. `1,4,8` runs the three in turn.
 */
const SCALES = (process.env.BENCH_SCALE ?? "1")
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((s) => Number.isInteger(s) && s > 0);
const ROWS_PER_FILE = Number(process.env.BENCH_ROWS_PER_FILE ?? 40_000);
const MEMORY_LIMIT_MB = Number(process.env.BENCH_MEMORY_LIMIT_MB ?? 768);
const PARQUET_V2 = process.env.BENCH_PARQUET_V2 !== "0";
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 5));
const TABLES = new Set((process.env.BENCH_TABLES ?? "events,covid,iceberg").split(",").map((t) => t.trim()));
const FIXTURE = join(DELTA_FIXTURES, "COVID-19_NYT");
const ADMIN_KEY = `lsk_${"b".repeat(40)}`;
const MB = 1024 * 1024;

interface Row {
  table: string;
  files: number;
  inputMb: number;
  plainMbS: number;
  crunchMbS: number;
  ratio: number;
  ratioMin: number;
  ratioMax: number;
  cpuRatio: number;
  cpuRatioMin: number;
  cpuRatioMax: number;
  plainDrr: number;
  crunchDrr: number;
  plainCpuS: number;
  crunchCpuS: number;
  peakRssMb: number;
  onboardingPeakMb?: number;
  settings: string;
  phases: Record<string, number>;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-bench-crunch-"));
  const server = await startNodeServer({
    dbUrl: `file:${join(dir, "plane.db")}`,
    port: 0,
    bootstrap: { adminPassword: "bench-admin-password", adminApiKey: ADMIN_KEY },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON of any endpoint
    return { status: res.status, body: (await res.json()) as any };
  };
  const waitJob = async (id: string) => {
    for (;;) {
      const { body } = await api("GET", `/api/v1/jobs/${id}`);
      if (["succeeded", "failed", "cancelled"].includes(body.status)) return body;
      await new Promise((r) => setTimeout(r, 200));
    }
  };

  const rows: Row[] = [];
  let agentCount = 0;
  try {
    for (const scale of SCALES) {
      const tables: [string, string, "delta" | "iceberg"][] = [];
      if (TABLES.has("events")) {
        const events = join(dir, `events-${scale}x`);
        const filesPerDay = FILES_PER_DAY * scale;
        process.stdout.write(
          `generating ${DAYS * filesPerDay} files of ${ROWS_PER_FILE} rows (${scale}x)... `,
        );
        const generated = await writeEventsTable(events, {
          days: DAYS,
          filesPerDay,
          rowsPerFile: ROWS_PER_FILE,
        });
        process.stdout.write(`${(generated.bytes / MB).toFixed(0)} MB\n`);
        tables.push([`events ${scale}x`, events, "delta"]);
      }
      // The fixture has one size: it runs at the first scale only.
      if (TABLES.has("covid") && scale === SCALES[0]) {
        const covid = join(dir, "covid");
        cpSync(FIXTURE, covid, { recursive: true });
        tables.push(["COVID-19_NYT", covid, "delta"]);
      }
      if (TABLES.has("iceberg")) {
        const iceberg = join(dir, `iceberg-${scale}x`);
        const files = DAYS * FILES_PER_DAY * scale;
        process.stdout.write(
          `generating an Iceberg table of ${files} files of ${ROWS_PER_FILE} rows (${scale}x)... `,
        );
        await writeIcebergTable({
          dir: iceberg,
          columns: icebergEventColumns(files * ROWS_PER_FILE),
          partition: [{ source: "event_ts", transform: "day" }],
          rows: files * ROWS_PER_FILE,
          files,
          commits: DAYS,
        });
        process.stdout.write(`${(folderBytes(join(iceberg, "data")) / MB).toFixed(0)} MB\n`);
        tables.push([`iceberg ${scale}x`, iceberg, "iceberg"]);
      }

      for (const [name, source, format] of tables) {
        // One agent per table and scale, so its peak memory is that crunch's.
        const { token } = (await api("POST", "/api/v1/agents", { name: `bench-${agentCount++}` })).body;
        const agent = spawnAgent({
          LAKESMITH_CONTROL_PLANE: url,
          LAKESMITH_AGENT_TOKEN: token,
          LAKESMITH_AGENT_CONCURRENCY: "1",
          LAKESMITH_AGENT_ALLOW: `file://${dir}`,
          LAKESMITH_AGENT_MEMORY_LIMIT_MB: String(MEMORY_LIMIT_MB),
          LAKESMITH_AGENT_SCRATCH: join(dir, "scratch"),
        });
        const rounds: Round[] = [];
        let onboardingPeakMb = 0;
        let crunchPeakMb = 0;
        try {
          await agent.waitForLog((l) => l.msg === "session established", 30_000);
          for (let round = 0; round < REPEAT; round++) {
            const path = `${source}-round-${round}`;
            // An Iceberg copy records its new location, as a table at home in its folder does.
            if (format === "iceberg") await copyIcebergTable(source, path);
            else cpSync(source, path, { recursive: true });
            const plain = await plainRewrite(path, format, join(dir, `plain-${agentCount}-${round}`));
            const table = (
              await api("POST", "/api/v1/tables", {
                name: `bench.t${agentCount}_${round}`,
                uri: `file://${path}`,
                format,
                parquet_v2: PARQUET_V2,
              })
            ).body;
            const onboarding = await waitJob(table.onboarding_job_id);
            if (onboarding.status !== "succeeded") throw new Error(`onboarding failed: ${onboarding.error}`);
            const trigger = await api("POST", `/api/v1/tables/${table.id}/crunch`, { whole_table: true });
            if (trigger.status !== 202) throw new Error(`crunch trigger: ${JSON.stringify(trigger.body)}`);
            // The agent's peak since the last crunch is onboarding's (it profiles the table); the crunch's
            // is measured apart.
            onboardingPeakMb = Math.max(onboardingPeakMb, peakRss(agent.child.pid));
            resetPeakRss(agent.child.pid);
            const cpuBefore = cpuSeconds(agent.child.pid);
            const job = await waitJob(trigger.body.id);
            const cpuS = cpuSeconds(agent.child.pid) - cpuBefore;
            crunchPeakMb = Math.max(crunchPeakMb, peakRss(agent.child.pid));
            // What follows, up to the next crunch, is the next round's onboarding.
            resetPeakRss(agent.child.pid);
            if (job.status !== "succeeded") throw new Error(`crunch failed: ${job.error}`);
            if (job.result.bytes_before !== plain.inputBytes)
              process.stdout.write(
                `note: crunch read ${job.result.bytes_before} bytes, plain ${plain.inputBytes}\n`,
              );
            rounds.push({ plain, crunch: job.result, crunchCpuS: cpuS });
            process.stdout.write(
              `${name}, round ${round + 1}: plain ${Math.round(plain.ms)} ms ${plain.cpuS.toFixed(2)} CPU s, ` +
                `crunch ${job.result.duration_ms} ms ${cpuS.toFixed(2)} CPU s ` +
                `(wall ratio ${(plain.ms / job.result.duration_ms).toFixed(2)}, CPU ratio ${(cpuS / plain.cpuS).toFixed(2)}); ` +
                `phases ${JSON.stringify(job.result.phases_ms)}\n`,
            );
            rmSync(path, { recursive: true, force: true });
            rmSync(join(dir, `plain-${agentCount}-${round}`), { recursive: true, force: true });
          }
          rows.push({ ...summarizeRounds(name, rounds, crunchPeakMb), onboardingPeakMb });
        } finally {
          agent.child.kill("SIGTERM");
          await agent.exited;
        }
        rmSync(source, { recursive: true, force: true });
      }
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }

  const f = (n: number, d = 1) => n.toFixed(d);
  const range = (m: number, lo: number, hi: number) => `${f(m, 2)} (${f(lo, 2)}–${f(hi, 2)})`;
  console.log(`\nmedians over ${REPEAT} rounds (ratios: the median of the rounds' ratios, and their range)`);
  console.log(
    "table               files  input MB  plain MB/s  crunch MB/s  wall ratio (range)  CPU ratio (range)  plain CPU s  crunch CPU s  plain DRR  crunch DRR  agent peak RSS",
  );
  for (const r of rows)
    console.log(
      `${r.table.padEnd(20)}${String(r.files).padStart(5)}${f(r.inputMb).padStart(10)}${f(r.plainMbS).padStart(12)}` +
        `${f(r.crunchMbS).padStart(13)}${range(r.ratio, r.ratioMin, r.ratioMax).padStart(20)}` +
        `${range(r.cpuRatio, r.cpuRatioMin, r.cpuRatioMax).padStart(19)}${f(r.plainCpuS, 2).padStart(13)}${f(r.crunchCpuS, 2).padStart(14)}` +
        `${`${f(r.plainDrr)}%`.padStart(11)}${`${f(r.crunchDrr)}%`.padStart(12)}${`${f(r.peakRssMb, 0)} MB`.padStart(16)}`,
    );
  for (const r of rows)
    console.log(
      `${r.table}: ${r.settings}\n  phases (ms): ${JSON.stringify(r.phases)}\n` +
        `  agent peak RSS: ${f(r.peakRssMb, 0)} MB crunching, ${f(r.onboardingPeakMb ?? Number.NaN, 0)} MB onboarding (profiling the table) before`,
    );
  console.log(
    `tables registered with parquet_v2: ${PARQUET_V2} (BENCH_PARQUET_V2=0 for v1 only); DuckDB memory limit ${MEMORY_LIMIT_MB} MB`,
  );
  console.log(
    "wall ratio: plain's time over the crunch job's; CPU ratio: the agent's CPU seconds over plain's (both in one run, rounds alternating)",
  );
  console.log(
    "targets: wall ratio >= 0.80; CPU ratio <= 1.25; crunch DRR >= plain DRR + 10 points; agent peak RSS < 800 MB",
  );
}

interface Round {
  plain: Awaited<ReturnType<typeof plainRewrite>>;
  // biome-ignore lint/suspicious/noExplicitAny: the crunch job's result as the API returns it
  crunch: any;
  crunchCpuS: number;
}

/** A table's row: medians over its rounds; the settings and phases of the round with the median ratio. */
function summarizeRounds(table: string, rounds: Round[], peakRssMb: number): Row {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  const ratioOf = (r: Round) => r.plain.ms / r.crunch.duration_ms;
  const ratios = rounds.map(ratioOf);
  const cpuRatios = rounds.map((r) => r.crunchCpuS / r.plain.cpuS);
  const typical = [...rounds].sort((a, b) => ratioOf(a) - ratioOf(b))[(rounds.length - 1) >> 1] as Round;
  const first = rounds[0] as Round;
  const inputMb = first.plain.inputBytes / MB;
  return {
    table,
    files: first.plain.files,
    inputMb,
    plainMbS: inputMb / (median(rounds.map((r) => r.plain.ms)) / 1000),
    crunchMbS: first.crunch.bytes_before / MB / (median(rounds.map((r) => r.crunch.duration_ms)) / 1000),
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    cpuRatio: median(cpuRatios),
    cpuRatioMin: Math.min(...cpuRatios),
    cpuRatioMax: Math.max(...cpuRatios),
    plainDrr: median(rounds.map((r) => 100 * (1 - r.plain.outputBytes / r.plain.inputBytes))),
    crunchDrr: median(rounds.map((r) => r.crunch.drr)),
    plainCpuS: median(rounds.map((r) => r.plain.cpuS)),
    crunchCpuS: median(rounds.map((r) => r.crunchCpuS)),
    peakRssMb,
    settings: typical.crunch.settings?.reason ?? "(none)",
    phases: { ...typical.crunch.phases_ms, total: typical.crunch.duration_ms },
  };
}

/** The plain rewrite of the table's live files: one COPY, zstd, DuckDB's defaults otherwise. */
async function plainRewrite(path: string, format: "delta" | "iceberg", out: string) {
  const engine = await Engine.open({ memoryLimitMb: MEMORY_LIMIT_MB, tempDir: join(out, ".spill") });
  try {
    const live = await liveFiles(path, format, engine, out);
    const files = live.map((f) => join(path, f.key));
    const inputBytes = live.reduce((n, f) => n + f.size, 0);
    const target = join(out, "out.parquet");
    const cpu = process.cpuUsage();
    const started = performance.now();
    await engine.run(
      `copy (select * from read_parquet(${sqlList(files)})) to ${sqlString(target)} (format parquet, compression zstd)`,
    );
    const ms = performance.now() - started;
    const { user, system } = process.cpuUsage(cpu);
    const outputBytes = statSync(target).size;
    return { files: files.length, inputBytes, outputBytes, ms, cpuS: (user + system) / 1e6 };
  } finally {
    engine.close();
  }
}

/** The table's live data files (store keys) and their sizes. */
async function liveFiles(path: string, format: "delta" | "iceberg", engine: Engine, out: string) {
  const store = new FileStore(path);
  if (format === "delta") {
    const snapshot = await loadSnapshot(store, engine, { scratchDir: join(out, ".log") });
    return snapshot.files.map((f) => ({ key: f.path, size: f.size }));
  }
  const { entries } = await readSnapshotFiles(store, await loadIcebergTable(store));
  return entries.flatMap((e) => (e.key ? [{ key: e.key, size: e.fileSizeInBytes }] : []));
}

/** The columns of the Iceberg benchmark table, `rows` spread evenly over `DAYS` days: the events table's kinds of values. */
const icebergEventColumns = (rows: number) => [
  { name: "event_id", type: "long", sql: "i" },
  {
    name: "event_ts",
    type: "timestamptz",
    sql: `timestamptz '2026-01-01 00:00:00+00' + to_microseconds((i * ${Math.floor((DAYS * 86_400_000_000) / rows)})::bigint)`,
  },
  { name: "customer_id", type: "long", sql: "(hash(i, 2) % 50000)::bigint" },
  {
    name: "country",
    type: "string",
    sql: "['US','DE','FR','GB','JP','BR','IN','CA'][1 + (hash(i, 3) % 8)::int]",
  },
  {
    name: "status",
    type: "string",
    sql: "['placed','paid','shipped','delivered','returned'][1 + (hash(i, 4) % 5)::int]",
  },
  { name: "sku", type: "string", sql: "'SKU-' || lpad((hash(i, 5) % 2000)::varchar, 5, '0')" },
  { name: "quantity", type: "int", sql: "(1 + hash(i, 6) % 4)::int" },
  {
    name: "amount",
    type: "decimal(12,2)",
    sql: "((1 + hash(i, 6) % 4) * (5 + (hash(i, 5) % 2000 * 37) % 200) * 0.99)::decimal(12,2)",
  },
];

function folderBytes(folder: string): number {
  let bytes = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true, recursive: true }))
    if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).size;
  return bytes;
}

/** CPU time a process has used so far, all its threads (Linux `/proc/<pid>/stat` utime + stime), in seconds. */
function cpuSeconds(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  // Fields after the command name (which may hold spaces) start at the state, field 3.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / CLOCK_TICKS;
}

/** Linux's clock ticks per second for `/proc` times (`getconf CLK_TCK`), 100 on every common kernel. */
const CLOCK_TICKS = 100;

/** Starts a process's peak resident memory (`VmHWM`) afresh from its current size (Linux `clear_refs`). */
function resetPeakRss(pid: number | undefined): void {
  if (pid) writeFileSync(`/proc/${pid}/clear_refs`, "5");
}

/** Peak resident memory of a process (Linux `VmHWM`), in MB. */
function peakRss(pid: number | undefined): number {
  if (!pid) return Number.NaN;
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

await main();
// Nothing of the bench may keep it alive (a spare DuckDB database, a socket): it is done.
process.exit(0);
