/**
 * Hive tables for tests: Parquet files written by DuckDB into Hive-style partition folders
 * (`dt=2026-01-01/part-00000.parquet`, a `_SUCCESS` marker beside them as Hive and Spark leave
 * one), registered in a loopback metastore (`hive-metastore.ts`).
 *
 * @example
 * const table = await writeHiveTable(dir, { partitions: ["2026-01-01"], filesPerPartition: 3 });
 * metastore.registerParquetTable({ db: "lake", name: "events", location: `file://${dir}`, ...table.spec }, table.partitions);
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Engine, sqlString } from "../../src/engine/index.ts";
import type { Column, PartitionSpec } from "./hive-metastore.ts";

export const HIVE_COLUMNS: Column[] = [
  { name: "id", type: "bigint" },
  { name: "name", type: "string" },
  { name: "amount", type: "decimal(12,2)" },
  { name: "tags", type: "array<string>" },
];

export interface HiveTableOptions {
  /** Values of the `dt` partition column; none: an unpartitioned table. */
  partitions?: string[];
  filesPerPartition?: number;
  rowsPerFile?: number;
  /** First id; files of one table never repeat an id. */
  firstId?: number;
}

/** Writes the files; answers the metastore spec of the table and its partitions. */
export async function writeHiveTable(dir: string, options: HiveTableOptions = {}) {
  const files = options.filesPerPartition ?? 3;
  const rows = options.rowsPerFile ?? 200;
  const partitions = options.partitions ?? [];
  let id = options.firstId ?? 0;
  const engine = await Engine.open();
  try {
    for (const dt of partitions.length ? partitions : [null]) {
      const folder = dt === null ? dir : join(dir, `dt=${dt}`);
      await mkdir(folder, { recursive: true });
      for (let f = 0; f < files; f++) {
        await writeHiveFile(
          engine,
          join(folder, `part-${String(f).padStart(5, "0")}-${id}.parquet`),
          id,
          rows,
        );
        id += rows;
      }
      await writeFile(join(folder, "_SUCCESS"), "");
    }
  } finally {
    engine.close();
  }
  return {
    spec: {
      columns: HIVE_COLUMNS,
      ...(partitions.length ? { partitionKeys: [{ name: "dt", type: "string" }] } : {}),
    },
    partitions: partitions.map((dt): PartitionSpec => ({ values: [dt] })),
    nextId: id,
  };
}

/** One Parquet file of `rows` rows from id `first`, snappy-compressed as Hive writes by default. */
export async function writeHiveFile(
  engine: Engine,
  path: string,
  first: number,
  rows: number,
): Promise<void> {
  await engine.run(
    `copy (select i::bigint as id, 'name-' || (i % 17) as name, (i * 1.25)::decimal(12,2) as amount,
       [('t' || (i % 3)), ('u' || (i % 5))] as tags
     from range(${first}, ${first + rows}) r(i))
     to ${sqlString(path)} (format parquet, compression snappy)`,
  );
}
