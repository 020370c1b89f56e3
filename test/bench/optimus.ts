/**
 * `npm run bench:optimus`, its log half: what reading a day's worth of Spark event logs costs the agent.
 *
 * BENCH_LOG_MB (default 1,024) MB of zstd-compressed Spark event logs are laid out on `file://` by
 * copying the real logs of `../shared/fixtures/query-logs/spark/` (Dataproc and Databricks Photon
 * NDS runs, DataSource V1 and V2 logs) round-robin under distinct application names: real content at
 * its real compression ratio (about 38 to 1), nothing generated. Then the agent's
 * `query_log_analysis` handler runs over them in this process, BENCH_REPEAT times (default 2), with a
 * table for every table root the logs scan (so every scan is mapped and folded), reading the logs in
 * as many worker threads as the agent would (cores, capped by LAKESMITH_AGENT_OPTIMUS_READERS; 1 reads
 * in this thread). Printed per round:
 * wall and CPU seconds, compressed MB/s, JSON GB read, queries and parts; then this process's peak
 * RSS (VmHWM), which is the agent's memory for the job (the tsx loader and the reader threads included;
 * CPU seconds count every thread).
 *
 * Targets (issue 22): 1 GB analysed in under 60 s; agent under 500 MB.
 * The scoring half is `test/bench/optimus-scoring.ts`, run after this one by the same npm script.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QUERY_LOG_ANALYSIS_KIND, type QueryLogAnalysisPayload } from "@lakesmith/shared/optimus";
import { runQueryLogAnalysis } from "../../agent/src/optimus/analysis/run.ts";
import { readerFor } from "../../agent/src/optimus/readers.ts";
import { sparkWorkerCount } from "../../agent/src/optimus/spark/parallel.ts";
import { FileStore } from "../../agent/src/store/index.ts";

const LOG_MB = Number(process.env.BENCH_LOG_MB ?? 1024);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const MB = 2 ** 20;
const FIXTURES = join(import.meta.dirname, "../../../shared/fixtures/query-logs/spark");

const peakRssMb = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;

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
  // Read like the job (in reader threads where there are several), so this thread decodes no zstd.
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
  for (let round = 1; round <= REPEAT; round++) {
    let parts = 0;
    const started = performance.now();
    const cpu = process.cpuUsage();
    const result = await runQueryLogAnalysis(
      {
        payload,
        signal: new AbortController().signal,
        progress: () => {},
        part: async () => {
          parts++;
          return undefined;
        },
      },
      { store: new FileStore(root), reader: readerFor("spark") },
    );
    const wall = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const cpuSeconds = (used.user + used.system) / 1e6;
    console.log(
      `round ${round}: ${wall.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} CPU-s, ` +
        `${(laid.bytes / MB / wall).toFixed(1)} MB/s compressed; ${result.logs} logs, ` +
        `${(result.lines / 1e6).toFixed(2)} M lines, ${result.queries_read} queries, ` +
        `${result.scans_matched}/${result.scans} scans mapped, ${parts} parts (${QUERY_LOG_ANALYSIS_KIND})`,
    );
  }
  console.log(`peak RSS ${peakRssMb().toFixed(0)} MB (target < 500); target < 60 s per round`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
