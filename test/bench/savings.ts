/**
 * `npm run bench:savings`: savings and metrics reads over a large rollup, in process (the app's
 * `request`, no sockets), on an embedded libSQL file.
 *
 * Seed (SQL, set-based): BENCH_TABLES tables (default 100,000) with a `savings_daily` row on each
 * of BENCH_DAYS days (default 30), the all-tables row of each day, and one catalog of
 * BENCH_CATALOG_TABLES (default 10,000) Lakesmith tables linked to its synced tables, with the
 * catalog's rows as the finish hooks write them. No job results exist: reads must not need them.
 * Measured, one request at a time, BENCH_REQUESTS each (default 200), p50 and p99 in ms: savings
 * in total, of one table, of the catalog; metrics over 366 days in total, over the seeded days
 * for one table and for the catalog.
 * Targets: every read p99 < 25 ms, whatever the number of tables. A missed target sets exit code
 * 1; every figure is printed either way.
 */
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { openNodeDatabase } from "../../control-plane/src/adapter/node-db.ts";
import { buildApp } from "../../control-plane/src/app.ts";
import { bootstrap } from "../../control-plane/src/bootstrap/bootstrap.ts";
import { catalogId } from "../../control-plane/src/catalogs/ids.ts";
import { Keyring } from "../../control-plane/src/secrets/keyring.ts";
import { createServices } from "../../control-plane/src/services.ts";
import { benchFolder } from "./lifecycle.ts";

const TABLES = Number(process.env.BENCH_TABLES ?? 100_000);
const DAYS = Number(process.env.BENCH_DAYS ?? 30);
const CATALOG_TABLES = Math.min(TABLES, Number(process.env.BENCH_CATALOG_TABLES ?? 10_000));
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const ADMIN_KEY = `lsk_${"s".repeat(40)}`;
const FIRST_DAY = "2026-01-01";

const database = await openNodeDatabase(`file:${join(benchFolder("lakesmith-bench-savings-"), "plane.db")}`);
const { db } = database;
const services = createServices({ db, secrets: Keyring.random() });
await bootstrap(services, { adminPassword: "bench-admin-password", adminApiKey: ADMIN_KEY });
const app = buildApp(services);

let started = performance.now();
await db.run(sql`insert into savings_daily
  (table_id, day, rewrites, bytes_before, bytes_after, files_before, files_after, partitions_crunched,
   partitions_deleted, files_deleted, bytes_deleted)
  with recursive t(n) as (select 1 union all select n + 1 from t where n < ${TABLES}),
    d(k) as (select 0 union all select k + 1 from d where k < ${DAYS - 1})
  select 'tbl_bench' || n, date(${FIRST_DAY}, '+' || k || ' days'), 1, 1000000 + n, 400000 + n, 40, 4, 2, 0, 1, 5000
  from t, d where true`);
await db.run(sql`insert into savings_daily
  select '*', day, sum(rewrites), sum(bytes_before), sum(bytes_after), sum(files_before), sum(files_after),
    sum(partitions_crunched), sum(partitions_deleted), sum(files_deleted), sum(bytes_deleted)
  from savings_daily group by day`);
await db.run(sql`insert into catalog_tables (connection_id, full_name, catalog, schema, name, detail, synced_at, sync_job_id)
  with recursive t(n) as (select 1 union all select n + 1 from t where n < ${CATALOG_TABLES})
  select 'con_bench', 'main.s.t' || n, 'main', 's', 't' || n, '{}', 0, 'job_bench' from t where true`);
await db.run(sql`insert into tables (id, name, uri, format, priority, catalog_connection_id, catalog_full_name)
  with recursive t(n) as (select 1 union all select n + 1 from t where n < ${CATALOG_TABLES})
  select 'tbl_bench' || n, 'bench.t' || n, 's3://lake/t' || n, 'delta', 'P2', 'con_bench', 'main.s.t' || n from t where true`);
await db.run(sql`insert into savings_daily
  select '@con_bench:main', s.day, sum(s.rewrites), sum(s.bytes_before), sum(s.bytes_after), sum(s.files_before),
    sum(s.files_after), sum(s.partitions_crunched), sum(s.partitions_deleted), sum(s.files_deleted), sum(s.bytes_deleted)
  from savings_daily s join tables t on t.id = s.table_id where t.catalog_connection_id = 'con_bench' group by s.day`);
const seedS = (performance.now() - started) / 1000;
console.log(
  `seeded ${TABLES} tables x ${DAYS} days (${TABLES * DAYS} rollup rows), a catalog of ${CATALOG_TABLES} tables, in ${seedS.toFixed(1)} s`,
);

const catalog = catalogId({ connectionId: "con_bench", catalog: "main" });
const lastDay = new Date(Date.parse(`${FIRST_DAY}T00:00:00Z`) + (DAYS - 1) * 86_400_000)
  .toISOString()
  .slice(0, 10);
const seeded = `start=${FIRST_DAY}&end=${lastDay}`;
const runs: [string, string, number][] = [
  ["savings, total", "/api/v1/savings", 25],
  ["savings, one table", "/api/v1/savings/tables/tbl_bench500", 25],
  [`savings, catalog of ${CATALOG_TABLES}`, `/api/v1/savings/catalogs/${catalog}`, 25],
  ["metrics, total, 366 days", `/api/v1/metrics?start=${FIRST_DAY}&end=2027-01-01`, 25],
  [`metrics, one table, ${DAYS} days`, `/api/v1/metrics/tables/tbl_bench500?${seeded}`, 25],
  [`metrics, catalog, ${DAYS} days`, `/api/v1/metrics/catalogs/${catalog}?${seeded}`, 25],
];
let missed = false;
for (const [name, path, targetMs] of runs) {
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    started = performance.now();
    const res = await app.request(path, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    await res.text();
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  const ok = at(0.99) < targetMs;
  missed ||= !ok;
  console.log(
    `${name.padEnd(32)} p50 ${at(0.5).toFixed(2)} ms  p99 ${at(0.99).toFixed(2)} ms  (target p99 < ${targetMs} ms: ${ok ? "met" : "MISSED"})`,
  );
}
database.close();
process.exitCode = missed ? 1 : 0;
