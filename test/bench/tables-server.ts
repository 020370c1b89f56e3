/**
 * The server side of `npm run bench:tables`: the real Node control plane (scheduler timer off) on a
 * fresh embedded libSQL file seeded with `BENCH_TABLES` tables in SQL: 95% active with a daily crunch
 * schedule each (run times spread over the day's 1,440 minutes), 3% pending, 2% failed. Sends
 * `{ready, port, key}` over IPC, then answers `{tick}` messages with the duration of one scheduler
 * tick after making schedules due: `none`, `minute` (those of one run time, as at any minute of a
 * day), `some` (1,000) or `all`. Stops when told to or when the bench goes away (its IPC channel
 * closes), and removes its folder.
 */
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { benchFolder, onShutdown } from "./lifecycle.ts";

const N = Number(process.env.BENCH_TABLES ?? 100_000);
const SOME = 1000;
const key = `lsk_${"c".repeat(40)}`;
const dir = benchFolder("lakesmith-bench-tables-");
const server = await startNodeServer({
  dbUrl: `file:${join(dir, "bench.db")}`,
  port: 0,
  schedulerIntervalMs: 0,
  bootstrap: { adminApiKey: key, adminPassword: "bench-admin-password" },
});
onShutdown(() => server.stop());
const { db } = server.services;

const recipe = JSON.stringify({
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: ["customer_id"],
  enumerated_columns: ["region"],
});
const now = Date.now();
const seedStart = performance.now();
await db.run(sql`
  with recursive seq(i) as (select 0 union all select i + 1 from seq where i + 1 < ${N})
  insert into tables (id, name, uri, format, priority, target_file_size_mb, onboarding_status, recipe,
                      onboarded_at, created_at, updated_at)
  select printf('tbl_bench%08d', i), printf('bench.t%08d', i), printf('s3://lake/t%08d', i), 'delta',
         case when i % 5 = 0 then 'P1' else 'P2' end, 512,
         case when i % 100 < 95 then 'active' when i % 100 < 98 then 'pending' else 'failed' end,
         case when i % 100 < 95 then ${recipe} end, ${now}, ${now}, ${now}
  from seq`);
// Daily crunch schedules, first due tomorrow (nothing is due until a tick message makes it so).
await db.run(sql`
  insert into schedules (id, table_id, job_type, schedule_type, lookback_start, lookback_end, run_time_utc,
                         enabled, next_run_at, created_at, updated_at)
  select printf('sch_bench%08d', rowid), id, 'crunch', 'daily', 15, 2,
         printf('%02d:%02d', (rowid * 7 % 1440) / 60, (rowid * 7 % 1440) % 60),
         1, ${now + 86_400_000}, ${now}, ${now}
  from tables where onboarding_status = 'active'`);
await db.run(sql`analyze`);
const seedMs = performance.now() - seedStart;

type Due = "none" | "minute" | "some" | "all";

async function tick(due: Due) {
  const at = Date.now();
  const past = at - 60_000;
  if (due === "minute")
    await db.run(sql`update schedules set next_run_at = ${past}, last_slot = null
                     where run_time_utc = (select run_time_utc from schedules limit 1)`);
  if (due === "some")
    await db.run(sql`update schedules set next_run_at = ${past}, last_slot = null
                     where id in (select id from schedules order by random() limit ${SOME})`);
  if (due === "all") await db.run(sql`update schedules set next_run_at = ${past}, last_slot = null`);
  // The setup's own writes go into the database file first, so the tick is not charged for
  // checkpointing them (a checkpoint runs at the first commit past 1,000 pages of WAL).
  await db.run(sql`pragma wal_checkpoint(truncate)`);
  const start = performance.now();
  const result = await server.services.scheduler.tick();
  return { ms: performance.now() - start, due: result.due, fired: result.fired };
}

process.on("message", (message: { tick: Due }) => {
  tick(message.tick).then(
    (figures) => process.send?.({ tick: message.tick, ...figures }),
    (err) => process.send?.({ error: String(err) }),
  );
});
process.send?.({ ready: true, port: server.port, key, seedMs });
