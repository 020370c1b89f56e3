/**
 * `npm run bench:discovery`: discovery of a location from an S3 Inventory report of BENCH_OBJECTS
 * objects (default 10,000,000) on `file://`, through the public API, with a control plane in this
 * process (embedded libSQL file) and a `lakesmith-agent` child process at its default settings.
 *
 * The report is written straight by DuckDB, as AWS lays one out: BENCH_BINS Parquet data files
 * (default 10) under `data/` with the inventory's columns, `manifest.json` listing them and
 * `manifest.checksum`; no object exists (discovery reads only the report). Keys spread over
 * BENCH_DATASETS datasets (default 2,000) of 10 sub-folders each, each under daily date folders,
 * so the run finds 20,000 prefixes in every bin; a tenth of the keys are not data files.
 *
 * Timed from `POST .../discover` until the attempt reads `completed`; the agent's peak RSS (Linux
 * `VmHWM`, reset before the run). Targets: under 120 s and under 500 MB. A missed target sets exit
 * code 1; every figure is printed either way. BENCH_DIR keeps (and reuses) the report.
 *
 * Then the JSON-to-Parquet part (`json-conversion.ts`): generated JSON converted through the API by
 * the same agent against a plain DuckDB `COPY` of the same files. BENCH_PARTS picks the parts
 * (`discovery,json`, the default, or either alone).
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Engine, sqlString } from "../../agent/src/engine/index.ts";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { type ChildAgent, spawnAgent } from "../support/agents.ts";
import { benchJsonConversion } from "./json-conversion.ts";
import { benchFolder, exitOnInterrupt } from "./lifecycle.ts";
import { peakRss, resetPeakRss } from "./memory.ts";

const ADMIN_KEY = `lsk_${"b".repeat(40)}`;
const OBJECTS = Number(process.env.BENCH_OBJECTS ?? 10_000_000);
const BINS = Number(process.env.BENCH_BINS ?? 10);
const DATASETS = Number(process.env.BENCH_DATASETS ?? 2000);
const TARGET_S = 120;
const TARGET_MB = 500;
const PARTS = new Set((process.env.BENCH_PARTS ?? "discovery,json").split(","));

exitOnInterrupt();
const dir = process.env.BENCH_DIR ?? benchFolder("lakesmith-bench-discovery-");
const say = (line: string) => process.stdout.write(`${line}\n`);
const inventoryRoot = join(dir, "inventory", "lake", "daily");

if (PARTS.has("discovery")) await writeReport();
const server = await startNodeServer({
  dbUrl: `file:${join(benchFolder("lakesmith-bench-discovery-plane-"), "plane.db")}`,
  port: 0,
  schedulerIntervalMs: 0,
  bootstrap: { adminApiKey: ADMIN_KEY, adminPassword: "bench-admin-password" },
});
let agent: ChildAgent | undefined;
try {
  const token = (await api("POST", "/api/v1/agents", { name: "bench-discovery" })).body.token as string;
  agent = spawnAgent({
    LAKESMITH_CONTROL_PLANE: server.url,
    LAKESMITH_AGENT_TOKEN: token,
    LAKESMITH_AGENT_CONCURRENCY: "1",
    LAKESMITH_AGENT_ALLOW: `file://${dir}`,
    LAKESMITH_AGENT_SCRATCH: join(dir, "scratch"),
  });
  await agent.waitForLog((l) => l.msg === "session established", 30_000);
  await api("PUT", "/api/v1/config", { min_discovery_prefix_size_mb: 0 });
  if (PARTS.has("discovery")) await benchDiscovery(agent);
  if (PARTS.has("json")) await benchJsonConversion(dir, api, say, verdict);
} finally {
  if (agent?.child.exitCode === null) agent.child.kill("SIGTERM");
  await server.stop();
}
process.exit(process.exitCode ?? 0);

async function benchDiscovery(agent: ChildAgent): Promise<void> {
  const location = (
    await api("POST", "/api/v1/object-maintenance/locations", {
      name: "bench",
      uri: `file://${join(dir, "lake", "landing")}`,
      discovery_method: "inventory_report",
      inventory_uri: `file://${inventoryRoot}`,
      run_discovery_immediately: false,
    })
  ).body;
  resetPeakRss(agent.child.pid);
  const started = performance.now();
  const attempt = (await api("POST", `/api/v1/object-maintenance/locations/${location.id}/discover`)).body;
  let state: Record<string, unknown> = {};
  for (;;) {
    state = (await api("GET", `/api/v1/object-maintenance/discovery/schedules/${attempt.id}`)).body;
    if (!["queued", "running"].includes(String(state.status))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const agentMb = peakRss(agent.child.pid);
  const prefixes = (
    await api("GET", `/api/v1/object-maintenance/locations/${location.id}/discovered-prefixes?limit=1`)
  ).body.total;
  const ok = state.status === "completed";
  say(
    `Lakesmith bench:discovery (file://, Node ${process.version}): ${OBJECTS.toLocaleString("en")} objects in ${BINS} bins, ` +
      `${prefixes} prefixes found; ${ok ? "" : `FAILED (${state.status}: ${state.error}) after `}${seconds.toFixed(1)} s ` +
      `(target < ${TARGET_S}: ${verdict(ok && seconds < TARGET_S)}); agent peak RSS ${agentMb.toFixed(0)} MB (target < ${TARGET_MB}: ${verdict(agentMb < TARGET_MB)})`,
  );
  say(
    `  attempt: ${JSON.stringify({ files_seen: state.files_seen, objects_scanned: state.objects_scanned, bins_done: state.bins_done })}`,
  );
}

function verdict(met: boolean): string {
  if (!met) process.exitCode = 1;
  return met ? "met" : "MISSED";
}

/** The report, written once per BENCH_DIR: data files by DuckDB, then the manifest and its checksum. */
async function writeReport(): Promise<void> {
  const stamp = "2026-11-25T01-00Z";
  const manifestPath = join(inventoryRoot, stamp, "manifest.json");
  if (existsSync(manifestPath)) return;
  const started = performance.now();
  mkdirSync(join(inventoryRoot, "data"), { recursive: true });
  mkdirSync(join(inventoryRoot, stamp), { recursive: true });
  const engine = await Engine.open({ memoryLimitMb: 1024, tempDir: join(dir, "duckdb") });
  const files: { key: string; size: number; MD5checksum: string }[] = [];
  try {
    const per = Math.ceil(OBJECTS / BINS);
    for (let bin = 0; bin < BINS; bin++) {
      const name = `bin-${String(bin).padStart(4, "0")}.parquet`;
      const path = join(inventoryRoot, "data", name);
      const from = bin * per;
      const to = Math.min(OBJECTS, from + per);
      await engine.run(`copy (
        select 'lake' as bucket,
          'landing/dataset-' || (i % ${DATASETS}) || '/part-' || ((i // ${DATASETS}) % 10) || '/2026/' ||
            lpad((1 + (i // 7) % 12)::varchar, 2, '0') || '/' || lpad((1 + i % 28)::varchar, 2, '0') || '/obj-' || i ||
            case when i % 10 = 0 then '.crc' else '.json.gz' end as key,
          (1000 + i % 100000)::bigint as size,
          (timestamp '2026-01-01' + to_seconds(i % 20000000))::timestamp_ms as last_modified_date,
          md5(i::varchar) as e_tag, 'STANDARD' as storage_class
        from range(${from}, ${to}) t(i)
      ) to ${sqlString(path)} (format parquet, row_group_size 122880)`);
      files.push({
        key: `lake/daily/data/${name}`,
        size: statSync(path).size,
        MD5checksum: await md5File(path),
      });
    }
  } finally {
    engine.close();
  }
  const manifest = JSON.stringify({
    sourceBucket: "lake",
    destinationBucket: "arn:aws:s3:::inventory",
    version: "2016-11-30",
    creationTimestamp: String(Date.parse("2026-11-25T01:00:00Z")),
    fileFormat: "Parquet",
    fileSchema:
      "message s3.inventory { required binary bucket (STRING); required binary key (STRING); optional int64 size; optional int64 last_modified_date (TIMESTAMP(MILLIS,true)); optional binary e_tag (STRING); optional binary storage_class (STRING);}",
    files,
  });
  writeFileSync(manifestPath, manifest);
  writeFileSync(
    join(inventoryRoot, stamp, "manifest.checksum"),
    createHash("md5").update(manifest).digest("hex"),
  );
  const mb = files.reduce((n, f) => n + f.size, 0) / 2 ** 20;
  say(
    `report: ${BINS} data files, ${mb.toFixed(0)} MB, written in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function md5File(path: string): Promise<string> {
  const hash = createHash("md5");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  // biome-ignore lint/suspicious/noExplicitAny: JSON of the API
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
}
