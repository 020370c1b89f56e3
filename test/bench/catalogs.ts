/**
 * `npm run bench:catalogs`: catalog connections at 100,000 tables (issue 19), through the public
 * API, against a control plane on an embedded libSQL file in its own process (this file, forked
 * with BENCH_CATALOGS_ROLE=plane) and a `lakesmith-agent` child process allowed the catalogs'
 * endpoints, running the agent's build (`npm run build -w agent`, made first) as an installed
 * agent does. The loopback catalogs run in this process.
 *
 * 1. Full sync: BENCH_TABLES tables (default 100,000) in BENCH_NAMESPACES namespaces (default 100)
 *    of the loopback Iceberg REST catalog, every one registered with the lineitem fixture's
 *    metadata (its size and `last-updated-ms` varied per table). Timed from `POST .../sync` until
 *    the job has ended and the connection reads `sync_status: completed`; peak RSS (VmHWM, reset
 *    before the sync) of the agent and the control plane. The catalog answers without validating
 *    them against the OpenAPI description (`validateResponses: false`, as the Unity server in step
 *    2; BENCH_VALIDATE=1 validates both): at 100,000 loads the validation would be what is
 *    measured. A sync that fails or does not end within BENCH_SYNC_TIMEOUT_S is reported with why, and the sync is measured again at
 *    BENCH_FALLBACK_TABLES (default 10,000).
 * 2. Incremental sync (workspace connections only): the same number of tables in the loopback
 *    Unity Catalog server, a full sync, then BENCH_CHANGED (default 100) tables given a new
 *    `updated_at` and `POST .../sync?mode=incremental`, timed the same way.
 * 3. Browse at the largest connection synced: `GET .../tables?limit=100&offset=<random>`, by
 *    full_name and with sort_by=size_bytes (and a size filter), open loop (Poisson arrivals at
 *    BENCH_RATE, default 200/s, over up to 10 keep-alive connections, each latency from when its
 *    request was due) for BENCH_DURATION_S (default 10) seconds.
 * Targets: full sync < 60 s, agent and control plane peak RSS < 300 MB each; incremental < 5 s;
 * browse p99 < 25 ms. A missed target sets exit code 1; every figure is printed either way.
 */
import { execFileSync, fork } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseJson } from "../../agent/src/iceberg/index.ts";
import { ICEBERG_FIXTURES } from "../../agent/test/support/iceberg.ts";
import { type RestCatalogServer, startRestCatalog } from "../../agent/test/support/rest-catalog.ts";
import { startUnityCatalog, type UnityCatalogServer } from "../../agent/test/support/unity-catalog.ts";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { type ChildAgent, spawnAgent } from "../support/agents.ts";
import { benchFolder, exitOnInterrupt, onShutdown, stopProcess } from "./lifecycle.ts";
import { anonRss, peakRss, resetPeakRss } from "./memory.ts";
import { cpuMs, openLoop } from "./open-loop.ts";

const ADMIN_KEY = `lsk_${"d".repeat(40)}`;

if (process.env.BENCH_CATALOGS_ROLE === "plane") {
  const dir = benchFolder("lakesmith-bench-catalogs-plane-");
  const server = await startNodeServer({
    dbUrl: `file:${join(dir, "plane.db")}`,
    port: 0,
    // No scheduled syncs or ticks in the middle of a measurement.
    schedulerIntervalMs: 0,
    bootstrap: { adminApiKey: ADMIN_KEY, adminPassword: "bench-admin-password" },
  });
  onShutdown(() => server.stop());
  process.send?.({ ready: true, port: server.port });
} else {
  await bench();
  // Nothing of the bench may keep it alive (a keep-alive socket, a catalog server): it is done.
  process.exit(process.exitCode ?? 0);
}

interface Sync {
  ok: boolean;
  seconds: number;
  agentMb: number;
  planeMb: number;
  /** The largest anonymous resident memory sampled during the sync (MB). */
  anonMb: { agent: number; plane: number };
  /** CPU time each process used during the sync (s). */
  cpuS: { agent: number; plane: number; catalogs: number };
  /** Why the sync did not complete, where it did not. */
  failure?: string;
  /** The job's stored result (counts only). */
  result?: Record<string, unknown>;
}

async function bench(): Promise<void> {
  exitOnInterrupt();
  const TABLES = Number(process.env.BENCH_TABLES ?? 100_000);
  // The agent as an installed one runs: its build (dist/cli.js), made now from the sources, so the
  // figures are the shipped program's, not tsx's transpiling loader's.
  const AGENT_BUILD = fileURLToPath(new URL("../../agent/dist/cli.js", import.meta.url));
  execFileSync("npm", ["run", "build", "-w", "agent"], {
    cwd: fileURLToPath(new URL("../../", import.meta.url)),
    stdio: "ignore",
  });
  const FALLBACK = Number(process.env.BENCH_FALLBACK_TABLES ?? 10_000);
  const NAMESPACES = Number(process.env.BENCH_NAMESPACES ?? 100);
  const CHANGED = Number(process.env.BENCH_CHANGED ?? 100);
  const RATE = Number(process.env.BENCH_RATE ?? 200);
  const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
  const TIMEOUT_S = Number(process.env.BENCH_SYNC_TIMEOUT_S ?? 300);
  const VALIDATE = process.env.BENCH_VALIDATE === "1";
  const SECRET = "bench-polaris-secret";
  const UNITY_TOKEN = "dapi-bench-token";
  const parts = new Set((process.env.BENCH_PARTS ?? "full,incremental,browse").split(","));
  const dir = benchFolder("lakesmith-bench-catalogs-");
  const lines: string[] = [];
  const misses: string[] = [];
  const say = (line: string) => {
    lines.push(line);
    console.log(line);
  };
  const verdict = (ok: boolean, what: string) => {
    if (!ok) misses.push(what);
    return ok ? "met" : "MISSED";
  };

  const plane = fork(fileURLToPath(import.meta.url), [], {
    env: { ...process.env, BENCH_CATALOGS_ROLE: "plane" },
    execArgv: [
      "--import",
      fileURLToPath(new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url)),
      ...(process.env.BENCH_PLANE_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const catalogs: { close(): Promise<void> }[] = [];
  let agent: ChildAgent | undefined;
  try {
    const { port } = await new Promise<{ port: number }>((resolve, reject) => {
      plane.once("message", (m) => resolve(m as { port: number }));
      plane.once("exit", (code) => reject(new Error(`the control plane exited with ${code}`)));
    });
    const url = `http://127.0.0.1:${port}`;
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      // biome-ignore lint/suspicious/noExplicitAny: JSON of any endpoint
      return { status: res.status, body: (await res.json()) as any };
    };

    const restCatalog = async (size: number): Promise<RestCatalogServer> => {
      const catalog = await startRestCatalog({
        clients: { lakesmith: SECRET },
        pageSize: 1000,
        validateResponses: VALIDATE,
      });
      catalogs.push(catalog);
      const metadata = parseJson(
        readFileSync(join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/metadata/v2.metadata.json"), "utf8"),
      ) as Record<string, unknown>;
      // The current snapshot's summary is where the agent reads the size (`total-files-size`).
      const current = (
        metadata.snapshots as { "snapshot-id": unknown; summary: Record<string, string> }[]
      ).find((s) => s["snapshot-id"] === metadata["current-snapshot-id"]);
      if (!current) throw new Error("the lineitem fixture has no current snapshot");
      const summary = current.summary;
      const updatedMs = Number(metadata["last-updated-ms"]);
      for (let i = 0; i < size; i++) {
        // register() copies the metadata: one object, a size and a change time per table.
        summary["total-files-size"] = String(1_000_000 + ((i * 7919) % 100_000) * 10_000);
        metadata["last-updated-ms"] = updatedMs + i;
        await catalog.tables.register([namespace(i % NAMESPACES)], table(i), { metadata });
      }
      return catalog;
    };
    const unityCatalog = async (size: number): Promise<UnityCatalogServer> => {
      const unity = await startUnityCatalog({ token: UNITY_TOKEN, validateResponses: VALIDATE });
      catalogs.push(unity);
      for (let i = 0; i < size; i++) unity.state.putTable(unityTable(i, 1_700_000_000_000));
      return unity;
    };
    const unityTable = (i: number, updatedAt: number) => ({
      catalog_name: "main",
      schema_name: namespace(i % NAMESPACES),
      name: table(i),
      table_type: "EXTERNAL",
      data_source_format: "DELTA",
      // Outside the agent's allow list: the size is not read (null, with the reason).
      storage_location: `s3://bench-lake/${namespace(i % NAMESPACES)}/${table(i)}`,
      columns: [
        { name: "event_date", type_name: "DATE", position: 0, partition_index: 0 },
        { name: "customer_id", type_name: "LONG", position: 1 },
      ],
      updated_at: updatedAt,
    });

    const start = performance.now();
    const rest = parts.has("full") ? await restCatalog(TABLES) : undefined;
    const unity = parts.has("incremental") ? await unityCatalog(TABLES) : undefined;
    say(
      `Lakesmith bench:catalogs (loopback, Node ${process.version}): ${TABLES} tables in ${NAMESPACES} namespaces, ` +
        `catalogs filled in ${((performance.now() - start) / 1000).toFixed(1)} s; catalog answers ${VALIDATE ? "" : "not "}validated`,
    );

    // Every table is reported, whatever its size (the lineitem fixture is about 1 MB). After the
    // fill, which can outlast the server's keep-alive timeout on an idle connection.
    await api("PUT", "/api/v1/config", { min_eligible_table_size_gb: 0 });
    const token = (await api("POST", "/api/v1/agents", { name: "bench-catalogs" })).body.token as string;
    const endpoints = [rest?.uri, unity?.url].filter((e): e is string => e !== undefined);
    const startAgent = async (extra: string[] = []) => {
      const child = spawnAgent(
        {
          LAKESMITH_CONTROL_PLANE: url,
          LAKESMITH_AGENT_TOKEN: token,
          LAKESMITH_AGENT_CONCURRENCY: "1",
          LAKESMITH_AGENT_ALLOW: `file://${dir}`,
          LAKESMITH_AGENT_ALLOW_ENDPOINTS: [...endpoints, ...extra].join(","),
          LAKESMITH_AGENT_SCRATCH: join(dir, "scratch"),
        },
        [],
        AGENT_BUILD,
        (process.env.BENCH_AGENT_NODE_ARGS ?? "").split(" ").filter(Boolean),
      );
      await child.waitForLog((l) => l.msg === "session established", 30_000);
      return child;
    };
    agent = await startAgent();

    /** Queues a sync and waits for its end: the job ended, the connection `completed` (or not). */
    const sync = async (connectionId: string, query = ""): Promise<Sync> => {
      resetPeakRss(agent?.child.pid);
      resetPeakRss(plane.pid);
      const started = performance.now();
      const cpuBefore = {
        agent: cpuMs(agent?.child.pid),
        plane: cpuMs(plane.pid),
        catalogs: cpuMs(process.pid),
      };
      const anon = { agent: 0, plane: 0 };
      const sampleAnon = () => {
        anon.agent = Math.max(anon.agent, anonRss(agent?.child.pid));
        anon.plane = Math.max(anon.plane, anonRss(plane.pid));
      };
      const queued = await api("POST", `/api/v1/catalog-connections/${connectionId}/sync${query}`);
      const measured = () => ({
        seconds: (performance.now() - started) / 1000,
        agentMb: peakRss(agent?.child.pid),
        planeMb: peakRss(plane.pid),
        anonMb: { ...anon },
        cpuS: {
          agent: (cpuMs(agent?.child.pid) - cpuBefore.agent) / 1000,
          plane: (cpuMs(plane.pid) - cpuBefore.plane) / 1000,
          catalogs: (cpuMs(process.pid) - cpuBefore.catalogs) / 1000,
        },
      });
      if (queued.status !== 202)
        return {
          ok: false,
          ...measured(),
          failure: `sync answered ${queued.status}: ${JSON.stringify(queued.body)}`,
        };
      const jobId = queued.body.id ?? queued.body.job_id;
      let attempts = 0;
      for (;;) {
        sampleAnon();
        const [job, connection] = await Promise.all([
          api("GET", `/api/v1/jobs/${jobId}`),
          api("GET", `/api/v1/catalog-connections/${connectionId}`),
        ]);
        attempts = Math.max(attempts, Number(job.body.attempts ?? 0));
        const ended = ["succeeded", "failed", "cancelled"].includes(job.body.status);
        const status = connection.body.sync_status;
        if (ended && status !== "running") {
          const figures = measured();
          if (job.body.status === "succeeded" && status === "completed")
            return { ok: true, ...figures, result: job.body.result };
          return {
            ok: false,
            ...figures,
            failure: `the job ended ${job.body.status} (${job.body.error ?? "no error"}), the connection reads ${status} (${connection.body.last_sync_error ?? ""})`,
          };
        }
        if (performance.now() - started > TIMEOUT_S * 1000) {
          const figures = measured();
          await api("POST", `/api/v1/jobs/${jobId}/cancel`);
          const socket = agent
            ?.logs()
            .filter((l) => /close|disconnect|reconnect|too big|payload/i.test(String(l.msg)));
          return {
            ok: false,
            ...figures,
            failure: `no end within ${TIMEOUT_S} s: the job reads ${job.body.status} after ${attempts} attempt(s); agent log: ${JSON.stringify(socket?.slice(-3))}`,
          };
        }
        await sleep(100);
      }
    };
    /** One sync's figures; `targetS` undefined for a sync that only sets up the next one. */
    const syncLine = (what: string, s: Sync, targetS: number | undefined, memory = true) => {
      const time =
        targetS === undefined
          ? "no target"
          : `target < ${targetS} s: ${verdict(s.ok && s.seconds < targetS, `${what} time`)}`;
      const rss = memory
        ? `agent peak RSS ${s.agentMb.toFixed(0)} MB (target < 300: ${verdict(s.agentMb < 300, `${what} agent RSS`)}), control plane ${s.planeMb.toFixed(0)} MB (target < 300: ${verdict(s.planeMb < 300, `${what} plane RSS`)})`
        : `agent peak ${s.agentMb.toFixed(0)} MB, control plane ${s.planeMb.toFixed(0)} MB`;
      say(`  ${what}: ${s.ok ? "" : "FAILED after "}${s.seconds.toFixed(1)} s (${time}); ${rss}`);
      say(
        `    anonymous memory peak (sampled every 100 ms; RSS also counts the database file's mapped pages): agent ${s.anonMb.agent.toFixed(0)} MB, control plane ${s.anonMb.plane.toFixed(0)} MB; CPU agent ${s.cpuS.agent.toFixed(1)} s, control plane ${s.cpuS.plane.toFixed(1)} s, catalog servers (this process) ${s.cpuS.catalogs.toFixed(1)} s; load average ${loadavg()[0]?.toFixed(1)}`,
      );
      if (s.result) say(`    result: ${counts(s.result)}`);
      if (s.failure) say(`    why: ${s.failure}`);
    };
    const connect = async (name: string, body: Record<string, unknown>) => {
      const created = await api("POST", "/api/v1/catalog-connections", { name, ...body });
      if (created.status !== 201) throw new Error(`create ${name}: ${JSON.stringify(created.body)}`);
      return created.body.id as string;
    };
    const polaris = (catalog: RestCatalogServer) => ({
      type: "polaris",
      catalog_url: catalog.uri,
      warehouse: "lake",
      client_id: "lakesmith",
      client_secret: SECRET,
    });

    let browsable: { id: string; tables: number } | undefined;
    if (rest) {
      say(`1. Full sync, Iceberg REST catalog (polaris connection), ${TABLES} tables`);
      const id = await connect("bench-rest", polaris(rest));
      const full = await sync(id);
      syncLine(`full sync of ${TABLES}`, full, 60);
      if (full.ok) browsable = { id, tables: TABLES };
      else if (FALLBACK < TABLES) {
        // A fresh agent: the failed one may still be retrying the job it could not report.
        await stopProcess(agent.child);
        await rest.close();
        const smaller = await restCatalog(FALLBACK);
        agent = await startAgent([smaller.uri]);
        const fallbackId = await connect("bench-rest-fallback", polaris(smaller));
        const again = await sync(fallbackId);
        syncLine(`full sync of ${FALLBACK} (fallback)`, again, 60);
        if (again.ok) browsable = { id: fallbackId, tables: FALLBACK };
        await smaller.close();
      }
    }

    if (unity) {
      say(`2. Incremental sync, Unity Catalog (workspace connection), ${CHANGED} changed among ${TABLES}`);
      const id = await connect("bench-unity", {
        type: "workspace",
        workspace_url: unity.url,
        token: UNITY_TOKEN,
      });
      const full = await sync(id);
      syncLine(`full sync of ${TABLES} (setup)`, full, undefined, false);
      if (full.ok) {
        if (!browsable || browsable.tables < TABLES) browsable = { id, tables: TABLES };
        for (let k = 0; k < CHANGED; k++) {
          const i = Math.floor((k * TABLES) / CHANGED);
          unity.state.putTable(unityTable(i, 1_700_000_000_000 + 60_000));
        }
        const incremental = await sync(id, "?mode=incremental");
        syncLine(`incremental sync, ${CHANGED} changed`, incremental, 5, false);
      } else say("  incremental sync: not measured (the full sync before it did not complete)");
    }

    if (parts.has("browse") && browsable) {
      say(
        `3. Browse GET /api/v1/catalog-connections/{id}/tables at ${browsable.tables} synced tables, open loop, Poisson arrivals at ${RATE} req/s for ${DURATION_S} s`,
      );
      const base = `/api/v1/catalog-connections/${browsable.id}/tables?limit=100`;
      const max = browsable.tables - 100;
      const runs: [string, (offset: number) => string, number][] = [
        ["limit=100&offset=<random>", (o) => `${base}&offset=${o}`, max],
        [
          "sort_by=size_bytes&sort_order=desc",
          (o) => `${base}&sort_by=size_bytes&sort_order=desc&offset=${o}`,
          max,
        ],
        [
          "min_size_bytes=500000000&sort_by=updated_at",
          (o) => `${base}&min_size_bytes=500000000&sort_by=updated_at&offset=${o}`,
          Math.floor(max / 2),
        ],
        [
          "search=t00&sort_by=size_bytes",
          (o) => `${base}&search=t00&sort_by=size_bytes&offset=${o}`,
          Math.min(max, 9900),
        ],
      ];
      const headers = { authorization: `Bearer ${ADMIN_KEY}` };
      const load = (path: (offset: number) => string, maxOffset: number, seconds: number) =>
        openLoop({ port, path, headers, maxOffset, rate: RATE, seconds });
      await load(runs[0]?.[1] ?? (() => base), max, 2); // warm-up
      for (const [label, path, maxOffset] of runs) {
        const cpuBefore = cpuMs(plane.pid);
        const r = await load(path, maxOffset, DURATION_S);
        const cpu = (cpuMs(plane.pid) - cpuBefore) / r.count;
        say(
          `  ${label.padEnd(44)} p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms ` +
            `(target < 25: ${verdict(r.p99 < 25 && r.errors === 0, `browse ${label}`)})  ${(r.count / DURATION_S).toFixed(0)} req/s  ` +
            `server CPU ${cpu.toFixed(2)} ms/req  errors ${r.errors}`,
        );
      }
      if (browsable.tables < TABLES) misses.push(`browse measured at ${browsable.tables}, not ${TABLES}`);
    } else if (parts.has("browse")) say("3. Browse: not measured (no sync completed)");
  } finally {
    if (agent) await stopProcess(agent.child);
    for (const catalog of catalogs) await catalog.close().catch(() => undefined);
    await stopProcess(plane);
  }
  console.log(
    "targets: full sync < 60 s; agent and control plane peak RSS < 300 MB; incremental sync < 5 s; browse p99 < 25 ms",
  );
  if (misses.length > 0) {
    console.log(`missed: ${misses.join("; ")}`);
    process.exitCode = 1;
  }
}

function namespace(n: number): string {
  return `ns${String(n).padStart(3, "0")}`;
}

function table(i: number): string {
  return `t${String(i).padStart(6, "0")}`;
}

function counts(result: Record<string, unknown>): string {
  return [
    "tables_count",
    "unchanged_count",
    "schemas_count",
    "below_min_size",
    "tables_marked_deleted",
    "duration_ms",
  ]
    .filter((k) => result[k] !== undefined)
    .map((k) => `${k} ${result[k]}`)
    .join(", ");
}
