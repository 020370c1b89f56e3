/**
 * The JSON-to-Parquet part of `npm run bench:discovery`: BENCH_JSON_MB (default 1024) of generated
 * newline-delimited JSON in BENCH_JSON_FILES files (default 16), under a use-as-registered location
 * whose prefix converts to a target prefix, converted through the API by the bench's agent
 * (`POST .../actions {action: convert}` until the job ends: the schema, the Parquet write, the
 * lossless check over every record and the manifest included; the bench's JSON takes the sampled
 * path, `agent/src/conversion/sampled.ts`).
 * Then, in the same run, a plain DuckDB `COPY (select * from read_json([...])) TO ... (format
 * parquet, compression zstd)` of the same files at the agent's memory limit. Reported: MB/s of
 * each (JSON MB over wall seconds), ours over plain (target at least 0.8), the CPU seconds of each
 * (Linux: the agent process's, from `/proc`; the plain copy's, this process's during it), so that a
 * loaded machine's figures can be read, and the DRR (JSON bytes over Parquet bytes).
 * BENCH_JSON_ROUNDS (default 1) repeats ours and the plain copy, each round into a new target
 * prefix. The records mix integers, doubles, text (hashes: little to compress), timestamps as text,
 * lists and a struct.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Engine, sqlList, sqlString } from "../../agent/src/engine/index.ts";

const JSON_MB = Number(process.env.BENCH_JSON_MB ?? 1024);
const JSON_FILES = Number(process.env.BENCH_JSON_FILES ?? 16);
const ROUNDS = Number(process.env.BENCH_JSON_ROUNDS ?? 1);
const TARGET_RATIO = 0.8;
/** Bytes one generated record takes, about (measured on the generator's output). */
const RECORD_BYTES = 237;

// biome-ignore lint/suspicious/noExplicitAny: JSON of the API
type Api = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

export async function benchJsonConversion(
  dir: string,
  api: Api,
  say: (line: string) => void,
  verdict: (met: boolean) => string,
): Promise<void> {
  const source = join(dir, "json-lake", "raw", "events");
  const target = join(dir, "json-lake", "curated", "events");
  const files = await generate(source);
  const jsonBytes = files.reduce((n, f) => n + statSync(f).size, 0);
  rmSync(target, { recursive: true, force: true });

  const location = (
    await api("POST", "/api/v1/object-maintenance/locations", {
      name: `bench-json-${Date.now()}`,
      uri: `file://${source}`,
      skip_age_days: 0,
    })
  ).body;
  const prefix = (await api("GET", `/api/v1/object-maintenance/locations/${location.id}/managed-prefixes`))
    .body.items[0];
  const mb = jsonBytes / 2 ** 20;
  for (let round = 1; round <= ROUNDS; round++) {
    const into = ROUNDS > 1 ? `${target}-${round}` : target;
    rmSync(into, { recursive: true, force: true });
    await api("PUT", `/api/v1/object-maintenance/prefixes/${prefix.id}/policy`, {
      convert: { target_prefix: `file://${into}`, target_file_size_mb: 128 },
    });
    const cpuBefore = agentCpuSeconds();
    const started = performance.now();
    const action = (
      await api("POST", `/api/v1/object-maintenance/prefixes/${prefix.id}/actions`, { action: "convert" })
    ).body;
    // biome-ignore lint/suspicious/noExplicitAny: JSON of the API
    let job: Record<string, any> = {};
    for (;;) {
      job = (await api("GET", `/api/v1/jobs/${action.job_id}`)).body;
      if (["succeeded", "failed", "cancelled"].includes(String(job.status))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const ours = (performance.now() - started) / 1000;
    const oursCpu = agentCpuSeconds() - cpuBefore;
    if (job.status !== "succeeded") {
      say(`JSON to Parquet: FAILED (${job.status}: ${job.error})`);
      verdict(false);
      return;
    }
    const plainStarted = process.cpuUsage();
    const plain = await plainCopy(files, join(dir, "json-plain"));
    const plainUsage = process.cpuUsage(plainStarted);
    const plainCpu = (plainUsage.user + plainUsage.system) / 1e6;
    const ratio = plain / ours;
    const r = job.result;
    say(
      `JSON to Parquet${ROUNDS > 1 ? ` (round ${round} of ${ROUNDS})` : ""}: ${mb.toFixed(0)} MB of JSON in ${files.length} files, ${Number(r.rows).toLocaleString("en")} rows, ${r.columns} columns -> ${r.files_out} Parquet files; ` +
        `ours ${ours.toFixed(1)} s (${(mb / ours).toFixed(1)} MB/s, agent CPU ${oursCpu.toFixed(1)} s) vs plain DuckDB COPY ${plain.toFixed(1)} s (${(mb / plain).toFixed(1)} MB/s, CPU ${plainCpu.toFixed(1)} s): ` +
        `${ratio.toFixed(2)} of plain (target >= ${TARGET_RATIO}: ${verdict(ratio >= TARGET_RATIO)}; CPU ${(plainCpu / oursCpu).toFixed(2)}); ` +
        `DRR ${Number(r.drr).toFixed(2)} (${(r.bytes_before / 2 ** 20).toFixed(0)} MB JSON -> ${(r.bytes_after / 2 ** 20).toFixed(0)} MB Parquet); load average ${loadavg()[0]?.toFixed(1)}`,
    );
    say(`  agent steps (ms): ${JSON.stringify(r.step_ms)}, job ${r.duration_ms} ms`);
  }
}

/** CPU seconds used so far by this process's children and their descendants (the agent): Linux `/proc`, else NaN. */
function agentCpuSeconds(): number {
  const ticks = 100; // USER_HZ on Linux
  const descendants = (pid: number): number[] => {
    try {
      const tasks = readdirSync(`/proc/${pid}/task`);
      const children = tasks.flatMap((t) =>
        readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number),
      );
      return children.flatMap((c) => [c, ...descendants(c)]);
    } catch {
      return [];
    }
  };
  const pids = descendants(process.pid);
  if (pids.length === 0) return Number.NaN;
  return pids.reduce((sum, pid) => {
    try {
      // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      return sum + (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      return sum;
    }
  }, 0);
}

/** The files, written once per BENCH_DIR and size by DuckDB's JSON writer. */
async function generate(folder: string): Promise<string[]> {
  const marker = join(folder, `.complete-${JSON_MB}-${JSON_FILES}-${RECORD_BYTES}`);
  if (existsSync(marker)) return listJson(folder);
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  const perFile = Math.ceil((JSON_MB * 2 ** 20) / RECORD_BYTES / JSON_FILES);
  const engine = await Engine.open({ memoryLimitMb: 1024, tempDir: join(folder, "..", "duckdb-gen") });
  try {
    for (let f = 0; f < JSON_FILES; f++) {
      const from = f * perFile;
      await engine.run(`copy (
        select i as id,
          'user-' || (hash(i) % 1000000) as user_id,
          left(md5(i::varchar), 16) as session,
          (['click', 'view', 'buy', 'scroll'])[1 + i % 4] as event,
          (hash(i, 1) % 10000000) / 100.0 as amount,
          (timestamp '2026-01-01' + to_seconds(i * 3 + hash(i, 2) % 3))::varchar as occurred_at,
          case when i % 5 = 0 then null else 'https://example.com/p/' || (hash(i, 3) % 99991) end as url,
          [('t' || (hash(i, 4) % 50)), ('t' || (hash(i, 5) % 50))] as tags,
          {'os': (['ios', 'android', 'web'])[1 + (hash(i, 6) % 3)::bigint], 'version': hash(i, 7) % 40, 'beta': i % 2 = 0} as device
        from range(${from}, ${from + perFile}) t(i)
      ) to ${sqlString(join(folder, `events-${String(f).padStart(3, "0")}.jsonl`))} (format json)`);
    }
  } finally {
    engine.close();
  }
  mkdirSync(marker);
  return listJson(folder);
}

function listJson(folder: string): string[] {
  return readdirSync(folder)
    .filter((f) => f.endsWith(".jsonl"))
    .sort()
    .map((f) => join(folder, f));
}

/** Seconds a plain `COPY` of the files to zstd Parquet takes, at the agent's default memory limit. */
async function plainCopy(files: string[], out: string): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const engine = await Engine.open({ memoryLimitMb: 768, tempDir: join(out, "duckdb") });
  try {
    const started = performance.now();
    await engine.run(
      `copy (select * from read_json(${sqlList(files)})) to ${sqlString(join(out, "plain"))} (format parquet, compression zstd, file_size_bytes '128MB')`,
    );
    return (performance.now() - started) / 1000;
  } finally {
    engine.close();
  }
}
