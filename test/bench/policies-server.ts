/**
 * The server side of `npm run bench:policies`: the real Node control plane (scheduler timer off) on
 * a fresh embedded libSQL file holding `BENCH_TABLES` synced tables of one catalog in 100
 * namespaces, one catalog policy and 100 prefix policies (one per namespace, from the longest path
 * down). It measures, then reports over IPC:
 * - `resolveMs`: the effective-policy resolution of every table (`policies/resolve.ts`, the whole
 *   catalog), from no managed table to all of them;
 * - `tickMs`: a scheduler tick with 1,000 managed tables due (onboarded, qualifying, their policy's
 *   daily compaction at the tick's occurrence), and the jobs it queued;
 * then serves `GET /api/v1/managedtables` until the bench goes away.
 */
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { resolve } from "../../control-plane/src/policies/resolve.ts";
import { benchFolder, onShutdown } from "./lifecycle.ts";

const N = Number(process.env.BENCH_TABLES ?? 100_000);
const DUE = 1000;
const NAMESPACES = 100;
const key = `lsk_${"p".repeat(40)}`;
const dir = benchFolder("lakesmith-bench-policies-");
const server = await startNodeServer({
  dbUrl: `file:${join(dir, "bench.db")}`,
  port: 0,
  schedulerIntervalMs: 0,
  bootstrap: { adminApiKey: key, adminPassword: "bench-admin-password" },
});
onShutdown(() => server.stop());
const { db } = server.services;
const ref = { connectionId: "con_bench", catalog: "main" };
const day = 86_400_000;
const now = Date.now();
const old = now - 30 * day;

// One connection, N synced tables: namespace `region<k>.area<k>` for table i (k = i % 100).
await db.run(sql`insert into catalog_connections (id, name, type, settings, secrets, secret_fields, created_at)
  values ('con_bench', 'bench', 'workspace', '{}', 'unused', '[]', ${now})`);
await db.run(sql`
  with recursive seq(i) as (select 0 union all select i + 1 from seq where i + 1 < ${N})
  insert into catalog_tables (connection_id, full_name, catalog, schema, name, format, table_type, location,
                              size_bytes, has_partitions, detail, synced_at, first_synced_at, sync_job_id)
  select 'con_bench', printf('main.region%02d.area%02d.t%08d', i % ${NAMESPACES}, i % ${NAMESPACES}, i), 'main',
         printf('region%02d.area%02d', i % ${NAMESPACES}, i % ${NAMESPACES}), printf('t%08d', i), 'delta', 'EXTERNAL',
         printf('s3://lake/t%08d', i), 5000000000, 0, '{}', ${old}, ${old}, 'job_seed'
  from seq`);
const body = (time: string) =>
  JSON.stringify({
    actions: { compact: {} },
    schedule: { frequency: "daily", time_utc: time },
    enabled: true,
    lookback_days: 1,
  });
await db.run(sql`insert into policies (id, connection_id, catalog, scope, target, enabled, body, created_at)
  values ('pol_catalog', 'con_bench', 'main', 'catalog', '', 1, ${body("03:00")}, ${now})`);
await db.run(sql`
  with recursive seq(k) as (select 0 union all select k + 1 from seq where k + 1 < ${NAMESPACES})
  insert into policies (id, connection_id, catalog, scope, target, enabled, body, created_at)
  select printf('pol_prefix%02d', k), 'con_bench', 'main', 'prefix',
         case when k % 2 = 0 then printf('region%02d', k) else printf('region%02d.area%02d', k, k) end,
         1, ${body("04:00")}, ${now} from seq`);
await db.run(sql`analyze`);
await db.run(sql`pragma wal_checkpoint(truncate)`);

let start = performance.now();
await resolve(db, ref, { kind: "catalog" }, new Date(now));
const resolveMs = performance.now() - start;
const [managed] = await db.all<{ n: number; prefixed: number }>(
  sql`select count(*) as n, sum(policy_id like 'pol_prefix%') as prefixed from managed_tables`,
);

// 1,000 of them onboarded (as URI tables, so no catalog credentials are needed) and due now, at
// their policy's occurrence; every other table is due tomorrow.
const at = new Date(now - (now % day) + 4 * 3_600_000);
const tickAt = new Date(at.getTime() + 60_000);
await db.run(sql`update managed_tables set next_run_at = ${now + day}`);
await db.run(sql`
  insert into tables (id, name, uri, format, priority, target_file_size_mb, onboarding_status, recipe, location_key,
                      onboarded_at, created_at, updated_at)
  select 'tbl_' || name, 'bench.' || name, 's3://lake/' || name, 'delta', 'P2', 512, 'active',
         '{"partition_columns":[],"partition_pattern":null,"date_filter_column":null,"cluster_columns":[],"enumerated_columns":[]}',
         's3://lake/' || name, ${now}, ${now}, ${now}
  from managed_tables where policy_id like 'pol_prefix%' order by full_name limit ${DUE}`);
await db.run(sql`update managed_tables set lake_table_id = 'tbl_' || name, next_run_at = ${at.getTime()}
  where 'tbl_' || name in (select id from tables)`);
await db.run(sql`pragma wal_checkpoint(truncate)`);
start = performance.now();
const tick = await server.services.scheduler.tick(tickAt);
const tickMs = performance.now() - start;
start = performance.now();
const idle = await server.services.scheduler.tick(tickAt);
const idleMs = performance.now() - start;

process.send?.({
  ready: true,
  port: server.port,
  key,
  resolveMs,
  managed: managed?.n,
  prefixed: managed?.prefixed,
  tickMs,
  due: tick.policies.due,
  queued: tick.policies.queued,
  idleMs,
  idleDue: idle.policies.due,
});
