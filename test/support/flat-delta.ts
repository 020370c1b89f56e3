/**
 * Unpartitioned Delta tables written the way Spark writes them: Parquet files whose `add` actions
 * carry statistics (`numRecords`, `minValues`, `maxValues`, `nullCount` of the columns that have
 * bounds), so a reader can skip files. Each file's rows come from a DuckDB SELECT given the file's
 * index; deterministic when the SELECT is.
 *
 * @example
 * await writeFlatDeltaTable(dir, {
 *   columns: [["a", "integer"], ["payload", "binary"]],
 *   files: 4,
 *   select: (f) => `select (hash(i, ${f}) % 10000)::integer as a, ... from range(1000) t(i)`,
 * });
 */
import { randomUUID } from "node:crypto";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { commitKey } from "../../agent/src/delta/log.ts";
import { Engine, sqlString } from "../../agent/src/engine/duckdb.ts";

/** A column and its Delta type; `integer`, `long`, `double`, `date`, `timestamp` and `string` get bounds. */
export type FlatColumn = [name: string, type: string];

export interface FlatTableOptions {
  columns: FlatColumn[];
  files: number;
  /** The rows of file `f`, as a SELECT naming every column in order. */
  select(file: number): string;
}

const BOUNDED = new Set(["integer", "long", "double", "date", "timestamp", "string"]);

/** A bound as Delta's statistics write it (timestamps in UTC with milliseconds). */
function bound(type: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (type === "timestamp") return new Date(String(value)).toISOString();
  if (type === "integer" || type === "double") return Number(value);
  if (type === "long") return Number(value);
  return String(value);
}

/** Writes the table at `path` (a local folder) as version 0; returns its files' total bytes. */
export async function writeFlatDeltaTable(
  path: string,
  options: FlatTableOptions,
): Promise<{ bytes: number }> {
  const engine = await Engine.open({ memoryLimitMb: 512 });
  const adds: unknown[] = [];
  let bytes = 0;
  try {
    await mkdir(path, { recursive: true });
    for (let f = 0; f < options.files; f++) {
      const name = `part-${String(f).padStart(5, "0")}-${randomUUID()}.c000.snappy.parquet`;
      const file = join(path, name);
      await engine.run(
        `copy (${options.select(f)}) to ${sqlString(file)} (format parquet, compression snappy, row_group_size 65536)`,
      );
      const bounded = options.columns.filter(([, type]) => BOUNDED.has(type));
      const aggregates = bounded.flatMap(([c], i) => [
        `min("${c}")::varchar as min${i}`,
        `max("${c}")::varchar as max${i}`,
        `count(*) - count("${c}") as nulls${i}`,
      ]);
      const [row] = await engine.query<Record<string, unknown>>(
        `select count(*) as n${aggregates.map((a) => `, ${a}`).join("")} from read_parquet(${sqlString(file)})`,
      );
      const stats = {
        numRecords: Number(row?.n),
        minValues: Object.fromEntries(bounded.map(([c, type], i) => [c, bound(type, row?.[`min${i}`])])),
        maxValues: Object.fromEntries(bounded.map(([c, type], i) => [c, bound(type, row?.[`max${i}`])])),
        nullCount: Object.fromEntries(bounded.map(([c], i) => [c, Number(row?.[`nulls${i}`])])),
      };
      const size = (await stat(file)).size;
      bytes += size;
      adds.push({
        add: {
          path: name,
          partitionValues: {},
          size,
          modificationTime: Date.now(),
          dataChange: true,
          stats: JSON.stringify(stats),
        },
      });
    }
  } finally {
    engine.close();
  }
  const schema = {
    type: "struct",
    fields: options.columns.map(([name, type]) => ({ name, type, nullable: true, metadata: {} })),
  };
  await mkdir(join(path, "_delta_log"), { recursive: true });
  const actions = [
    { commitInfo: { timestamp: Date.now(), operation: "WRITE", engineInfo: "lakesmith-test-writer" } },
    { protocol: { minReaderVersion: 1, minWriterVersion: 2 } },
    {
      metaData: {
        id: randomUUID(),
        format: { provider: "parquet", options: {} },
        schemaString: JSON.stringify(schema),
        partitionColumns: [],
        configuration: {},
        createdTime: Date.now(),
      },
    },
    ...adds,
  ];
  await writeFile(join(path, commitKey(0)), `${actions.map((a) => JSON.stringify(a)).join("\n")}\n`, {
    flag: "wx",
  });
  return { bytes };
}
