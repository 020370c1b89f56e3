/**
 * `npm run bench:optimus`, its log half: what reading a day's worth of Spark event logs costs the agent.
 *
 * BENCH_LOG_MB (default 1,024) MB of zstd-compressed Spark event logs are laid out on `file://` by
 * copying the real logs of `../shared/fixtures/query-logs/spark/` (Dataproc and Databricks Photon
 * NDS runs, DataSource V1 and V2 logs) round-robin under distinct application names: real content at
 * its real compression ratio (about 38 to 1), nothing generated. The agent's `query_log_analysis`
 * handler then runs over them BENCH_REPEAT times (default 2), with a table for every table root the
 * logs scan (so every scan is mapped and folded), in a process of its own (`optimus-job.ts`),
 * bundled as the agent ships and reading in as many threads as the agent would (cores, capped by
 * LAKESMITH_AGENT_OPTIMUS_READERS; 1 reads in its main thread). That process's peak RSS (VmHWM) is
 * the agent's memory for the job, its threads included; its CPU seconds count every thread.
 * Printed per round: wall and CPU seconds, compressed MB/s, what was read, peak RSS. The process runs
 * with the agent's malloc settings (`AGENT_MALLOC_ENV`); set them empty to measure glibc's defaults.
 *
 * Targets (issue 22): 1 GB analysed in under 60 s; agent under 500 MB.
 * The scoring half is `test/bench/optimus-scoring.ts`, run after this one by the same npm script.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AGENT_MALLOC_ENV } from "@lakesmith/shared/agent-malloc";
import type { QueryLogAnalysisPayload } from "@lakesmith/shared/optimus";
import { AGENT_ENTRIES, bundleAgent } from "../../agent/scripts/bundle.ts";
import { readerFor } from "../../agent/src/optimus/readers.ts";
import { sparkWorkerCount } from "../../agent/src/optimus/spark/parallel.ts";
import { FileStore } from "../../agent/src/store/index.ts";

const LOG_MB = Number(process.env.BENCH_LOG_MB ?? 1024);
const MB = 2 ** 20;
const FIXTURES = join(import.meta.dirname, "../../../shared/fixtures/query-logs/spark");

/** The real zstd logs, copied round-robin until `LOG_MB` MB lie in `dir`. */
function layOut(dir: string): { files: number; bytes: number } {
  const sources = readdirSync(FIXTURES).filter((name) => name.endsWith(".zstd"));
  let bytes = 0;
  let files = 0;
  while (bytes < LOG_MB * MB) {
    const source = sources[files % sources.length] as string;
    copyFileSync(join(FIXTURES, source), join(dir, `app-${String(files).padStart(5, "0")}-${source}`));
    bytes += statSync(join(FIXTURES, source)).size;
    files++;
  }
  return { files, bytes };
}

/** A table for every root the fixtures' scans list, named after its last path segment. */
async function tablesOfFixtures(): Promise<QueryLogAnalysisPayload["tables"]> {
  const roots = new Set<string>();
  const reader = readerFor("spark");
  for await (const query of reader(new FileStore(FIXTURES), "", { logs: 0, lines: 0, malformedLines: 0 }))
    for (const scan of query.scans) for (const location of scan.locations) roots.add(location);
  return [...roots].sort().map((uri, i) => ({
    table_fqn: `bench.nds.${uri.split("/").pop()}_${i}`,
    table_id: `tbl_bench_${i}`,
    names: [],
    uris: [uri],
  }));
}

const root = mkdtempSync(join(tmpdir(), "bench-optimus-"));
try {
  const laid = layOut(root);
  const tables = await tablesOfFixtures();
  console.log(
    `logs: ${laid.files} files, ${(laid.bytes / MB).toFixed(0)} MB zstd (real Spark event logs, round-robin); ${tables.length} tables; ` +
      `${sparkWorkerCount(laid.files)} reader threads`,
  );
  const payload: QueryLogAnalysisPayload = {
    submission_id: "opt_bench",
    engine: "spark",
    query_logs_uri: `file://${root}`,
    window_start: "2000-01-01",
    window_end: "2099-12-31",
    tables,
  };
  const payloadFile = join(root, "..", `${root.split("/").pop()}.payload.json`);
  writeFileSync(payloadFile, JSON.stringify(payload));
  try {
    await runJob(await buildJob(), payloadFile);
  } finally {
    rmSync(payloadFile, { force: true });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

/**
 * `optimus-job.ts` bundled exactly as the agent ships (`agent/scripts/bundle.ts`), with the reader
 * threads' entry beside it, where the bundled reader starts them.
 */
async function buildJob(): Promise<string> {
  const outdir = join(import.meta.dirname, ".build");
  await bundleAgent(
    { "optimus-job": "../test/bench/optimus-job.ts", "optimus-worker": AGENT_ENTRIES["optimus-worker"] },
    outdir,
  );
  return join(outdir, "optimus-job.js");
}

/** Runs the bundled job in its own process, its output passed through. */
async function runJob(job: string, payloadFile: string): Promise<void> {
  // The agent's malloc settings, as shipped; variables the caller set win, and set empty they
  // measure glibc's defaults.
  const env: NodeJS.ProcessEnv = { ...AGENT_MALLOC_ENV, ...process.env };
  for (const [name, value] of Object.entries(env))
    if (name.startsWith("MALLOC_") && value === "") delete env[name];
  const shown = Object.entries(env).filter(([name]) => name.startsWith("MALLOC_"));
  console.log(
    `the agent's process: ${shown.length > 0 ? shown.map(([n, v]) => `${n}=${v}`).join(" ") : "glibc's malloc defaults"}`,
  );
  const child = spawn(process.execPath, [job, payloadFile, root], { stdio: "inherit", env });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`the bench's agent process exited with ${code}`);
}
