/**
 * The agent's side of `test/bench/optimus.ts`: runs the `query_log_analysis` handler over the logs
 * the bench laid out, `BENCH_REPEAT` rounds, in a process of its own, bundled as the agent ships
 * (`optimus.ts` builds it with the reader threads' entry beside it), so its memory is the agent's
 * for the job: no tsx, none of the bench's own setup.
 *
 * Usage: node optimus-job.js <payload.json> <log root>. Prints one line per round: wall and CPU
 * seconds (every thread), compressed MB/s, what was read, and the round's peak RSS (VmHWM, reset
 * before each round where the kernel allows).
 */
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { QUERY_LOG_ANALYSIS_KIND, type QueryLogAnalysisPayload } from "@lakesmith/shared/optimus";
import { runQueryLogAnalysis } from "../../agent/src/optimus/analysis/run.ts";
import { readerFor } from "../../agent/src/optimus/readers.ts";
import { FileStore } from "../../agent/src/store/index.ts";

const [payloadFile, root] = process.argv.slice(2) as [string, string];
const payload = JSON.parse(readFileSync(payloadFile, "utf8")) as QueryLogAnalysisPayload;
const REPEAT = Number(process.env.BENCH_REPEAT ?? 2);
const MB = 2 ** 20;

const peakRssMb = () =>
  Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;

/** Resets VmHWM to the current RSS (Linux: `clear_refs` 5); false where that is not allowed. */
function resetPeak(): boolean {
  try {
    writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

let bytes = 0;
const store = new FileStore(root);
for await (const info of store.list("")) bytes += statSync(join(root, info.key)).size;

for (let round = 1; round <= REPEAT; round++) {
  const reset = resetPeak();
  const before = process.memoryUsage().rss / MB;
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
    { store, reader: readerFor("spark") },
  );
  const wall = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  console.log(
    `round ${round}: ${wall.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} CPU-s, ` +
      `${(bytes / MB / wall).toFixed(1)} MB/s compressed; ${result.logs} logs, ` +
      `${(result.lines / 1e6).toFixed(2)} M lines, ${result.queries_read} queries, ` +
      `${result.scans_matched}/${result.scans} scans mapped, ${parts} parts (${QUERY_LOG_ANALYSIS_KIND}); ` +
      `peak RSS ${peakRssMb().toFixed(0)} MB ${reset ? "this round" : "so far"} (${before.toFixed(0)} MB at its start)`,
  );
}
