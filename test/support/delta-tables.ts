/**
 * Delta tables written the way another engine would, for crunch tests and the crunch benchmark:
 * many small snappy Parquet files in `date=YYYY-MM-DD/` partitions, realistic columns (timestamps,
 * low-cardinality strings, ids, decimals), committed with plain JSON log entries. Deterministic:
 * the same options give the same rows.
 *
 * `appendCommit` is a second, independent writer (a blind append with its own conflict retry), used
 * to race a crunch.
 *
 * @example
 * const table = await writeEventsTable(join(dir, "events"), { days: 4, filesPerDay: 10, rowsPerFile: 2000 });
 */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { commitKey } from "../../agent/src/delta/log.ts";
import { Engine, sqlString } from "../../agent/src/engine/duckdb.ts";

export interface EventsTableOptions {
  days: number;
  filesPerDay: number;
  rowsPerFile: number;
  /** First partition date (default 2026-01-01). */
  startDate?: string;
  seed?: number;
}

export interface GeneratedTable {
  path: string;
  files: number;
  rows: number;
  bytes: number;
}

const SCHEMA = {
  type: "struct",
  fields: [
    ["event_id", "long"],
    ["event_ts", "timestamp"],
    ["customer_id", "long"],
    ["country", "string"],
    ["status", "string"],
    ["sku", "string"],
    ["quantity", "integer"],
    ["amount", "decimal(12,2)"],
    ["event_date", "string"],
  ].map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
};

const COUNTRIES = ["US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "AU", "NL", "ES", "IT"];
const STATUSES = ["delivered", "delivered", "delivered", "shipped", "paid", "created", "returned"];

/**
 * The SELECT of one file's rows: deterministic in (seed, day, file). Like real order events: each
 * file holds a stretch of time in arrival order, customers and SKUs are skewed (a few are most of
 * the rows), a few countries and statuses dominate, and an amount is a quantity times its SKU's price.
 */
function rowsSql(day: string, fileIndex: number, rows: number, seed: number, filesPerDay: number): string {
  const base = fileIndex * rows;
  const h = (salt: number) => `hash(i + ${base}, ${seed + salt})`;
  const skewed = (salt: number, n: number) => `floor(pow((${h(salt)} % 1000000) / 1e6, 3) * ${n})::bigint`;
  const list = (values: string[]) => `[${values.map(sqlString).join(", ")}]`;
  const spacing = Math.max(1, Math.floor(86_400_000_000 / (Math.max(1, filesPerDay) * rows)));
  return `select
      (epoch(${sqlString(day)}::date)::bigint // 86400) * 100000000 + ${base} + i as event_id,
      (${sqlString(day)}::date + to_microseconds(((${base} + i) * ${spacing} + ${h(1)} % ${spacing})::bigint))::timestamptz as event_ts,
      ${skewed(2, 50_000)} as customer_id,
      ${list(COUNTRIES)}[1 + ${skewed(3, COUNTRIES.length)}::int] as country,
      ${list(STATUSES)}[1 + (${h(4)} % ${STATUSES.length})::int] as status,
      'SKU-' || lpad(sku_n::varchar, 5, '0') as sku,
      quantity,
      (quantity * (5 + (sku_n * 37) % 200) * 0.99)::decimal(12,2) as amount
    from (select i, ${skewed(5, 2000)} as sku_n, (1 + ${h(6)} % 4)::integer as quantity from range(${rows}) t(i))`;
}

function addAction(path: string, size: number, partition: Record<string, string>, rows: number) {
  return {
    add: {
      path,
      partitionValues: partition,
      size,
      modificationTime: Date.now(),
      dataChange: true,
      stats: JSON.stringify({ numRecords: rows }),
    },
  };
}

/** Writes a new partitioned events table at `path` (a local folder) as version 0. */
export async function writeEventsTable(path: string, options: EventsTableOptions): Promise<GeneratedTable> {
  const seed = options.seed ?? 7;
  const start = Date.parse(`${options.startDate ?? "2026-01-01"}T00:00:00Z`);
  const engine = await Engine.open({ memoryLimitMb: 512 });
  const actions: unknown[] = [];
  let bytes = 0;
  try {
    for (let d = 0; d < options.days; d++) {
      const day = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
      const folder = `event_date=${day}`;
      await mkdir(join(path, folder), { recursive: true });
      for (let f = 0; f < options.filesPerDay; f++) {
        const name = `${folder}/part-${String(f).padStart(5, "0")}-${randomUUID()}.c000.snappy.parquet`;
        await engine.run(
          `copy (${rowsSql(day, f, options.rowsPerFile, seed, options.filesPerDay)}) to ${sqlString(join(path, name))}
           (format parquet, compression snappy, row_group_size 8192)`,
        );
        const size = (await stat(join(path, name))).size;
        bytes += size;
        actions.push(addAction(name, size, { event_date: day }, options.rowsPerFile));
      }
    }
  } finally {
    engine.close();
  }
  await mkdir(join(path, "_delta_log"), { recursive: true });
  const header = [
    { commitInfo: { timestamp: Date.now(), operation: "WRITE", engineInfo: "lakesmith-test-writer" } },
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: randomUUID(),
        format: { provider: "parquet", options: {} },
        schemaString: JSON.stringify(SCHEMA),
        partitionColumns: ["event_date"],
        configuration: {},
        createdTime: Date.now(),
      },
    },
  ];
  await writeFile(
    join(path, commitKey(0)),
    `${[...header, ...actions].map((a) => JSON.stringify(a)).join("\n")}\n`,
    {
      flag: "wx",
    },
  );
  const files = options.days * options.filesPerDay;
  return { path, files, rows: files * options.rowsPerFile, bytes };
}

/**
 * Appends one file of `rows` rows to partition `day` as a blind append, the way a streaming writer
 * would: it writes the data file, then the next log version if absent, retrying on a lost race.
 * Returns the version it committed.
 */
export async function appendCommit(
  path: string,
  options: { day: string; rows: number; fileIndex: number; seed?: number },
): Promise<number> {
  const engine = await Engine.open({ memoryLimitMb: 256 });
  const name = `event_date=${options.day}/part-append-${randomUUID()}.c000.snappy.parquet`;
  try {
    await mkdir(join(path, `event_date=${options.day}`), { recursive: true });
    await engine.run(
      `copy (${rowsSql(options.day, options.fileIndex, options.rows, options.seed ?? 7, 1)}) to ${sqlString(join(path, name))}
       (format parquet, compression snappy)`,
    );
  } finally {
    engine.close();
  }
  const size = (await stat(join(path, name))).size;
  const body = `${[
    { commitInfo: { timestamp: Date.now(), operation: "WRITE", operationParameters: { mode: "Append" } } },
    addAction(name, size, { event_date: options.day }, options.rows),
  ]
    .map((a) => JSON.stringify(a))
    .join("\n")}\n`;
  for (;;) {
    const version = (await latestVersion(path)) + 1;
    try {
      await writeFile(join(path, commitKey(version)), body, { flag: "wx" });
      return version;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
}

/** The newest JSON commit version in the table's log. */
export async function latestVersion(path: string): Promise<number> {
  const names = await readdir(join(path, "_delta_log"));
  return Math.max(-1, ...names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20))));
}
