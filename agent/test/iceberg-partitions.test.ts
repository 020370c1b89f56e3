/**
 * Partition values in the fixtures' manifests against the data they describe. Most partition_*
 * tables were written Hive-style: their data files do not hold the partition column at all, so
 * those values are checked against the manifest's bounds for the source column and against the
 * folder the writer named after them; tables whose files do hold the source column are checked by
 * applying the transform to every value DuckDB reads.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlIdent, sqlString } from "../src/engine/duckdb.ts";
import {
  applyTransform,
  currentSchema,
  humanString,
  type IcebergTable,
  type IcebergValue,
  isPrimitive,
  loadIcebergTable,
  type ManifestEntry,
  type PrimitiveType,
  parseDecimal,
  parseTimestamp,
  partitionSpecById,
  readSnapshotFiles,
  resultType,
  tableFieldIndex,
  transformString,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import { ICEBERG_FIXTURES } from "./support/iceberg.ts";

let engine: Engine;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-partitions-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});
afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function open(name: string) {
  const store = new FileStore(join(ICEBERG_FIXTURES, name));
  const table = await loadIcebergTable(store);
  const { entries } = await readSnapshotFiles(store, table);
  return { table, files: entries.filter((e) => e.content === "data") };
}

const localPath = (table: IcebergTable, e: ManifestEntry) =>
  join(new URL(table.storeUri).pathname, e.key ?? "");

function sourceType(table: IcebergTable, id: number): PrimitiveType {
  const type = tableFieldIndex(table).get(id)?.type;
  if (!type || !isPrimitive(type)) throw new Error(`field ${id} is not a primitive column`);
  return type;
}

/** A SQL expression giving a column's values in a form that converts exactly to the reader's representation. */
function canonical(
  type: PrimitiveType,
  column: string,
): { sql: string; parse: (v: unknown) => IcebergValue } {
  const c = sqlIdent(column);
  if (type.kind === "decimal")
    return { sql: `${c}::VARCHAR`, parse: (v) => parseDecimal(String(v), type.scale) };
  if (type.kind === "fixed") return { sql: `hex(${c})`, parse: (v) => Buffer.from(String(v), "hex") };
  switch (type.name) {
    case "long":
      return { sql: `${c}::VARCHAR`, parse: (v) => BigInt(String(v)) };
    case "date":
      return { sql: `${c} - DATE '1970-01-01'`, parse: Number };
    case "time":
      return {
        sql: `datediff('microsecond', TIME '00:00:00', ${c})::VARCHAR`,
        parse: (v) => BigInt(String(v)),
      };
    case "timestamp":
    case "timestamptz":
      return { sql: `epoch_us(${c})::VARCHAR`, parse: (v) => BigInt(String(v)) };
    case "uuid":
      return { sql: `${c}::VARCHAR`, parse: String };
    case "binary":
      return { sql: `hex(${c})`, parse: (v) => Buffer.from(String(v), "hex") };
    default:
      return { sql: c, parse: (v) => v as IcebergValue };
  }
}

/** Parquet column names by field id. */
async function columnsById(path: string): Promise<Map<number, string>> {
  const columns = await engine.query<{ name: string; field_id: string | null }>(
    `select name, field_id from parquet_schema(${sqlString(path)})`,
  );
  return new Map(columns.filter((c) => c.field_id !== null).map((c) => [Number(c.field_id), c.name]));
}

describe("partition values of files that hold their source column equal the transform of every value", () => {
  it.each([
    ["identity on long", "equality_delete_cross_partition/warehouse/ns/t"],
    ["bucket[1] on string", "equality_delete_extra_column/warehouse/ns/t"],
    ["identity on string", "equality_deletes/warehouse/mydb/mytable_partitioned"],
    ["identity on string, format v1", "iceberg_v1_deprecated/default/legacy_v1"],
    ["day on timestamptz", "map_stats/default.db/map_stats"],
  ])("%s (%s)", async (_, name) => {
    const { table, files } = await open(name);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const path = localPath(table, file);
      const columns = await columnsById(path);
      for (const field of partitionSpecById(table, file.specId).fields) {
        const type = sourceType(table, field.sourceId);
        const column = columns.get(field.sourceId);
        if (column === undefined) throw new Error(`${path} lacks source column ${field.sourceId}`);
        const { sql, parse } = canonical(type, column);
        const values = await engine.query<{ v: unknown }>(
          `select distinct ${sql} as v from read_parquet(${sqlString(path)})`,
        );
        const transformed = values.map((r) =>
          applyTransform(field.transform, type, r.v === null ? null : parse(r.v)),
        );
        expect(transformed.length, `${path}, ${transformString(field.transform)}`).toBeGreaterThan(0);
        for (const value of transformed) expect(value).toEqual(file.partitionById.get(field.fieldId));
      }
    }
  });
});

describe("partition values of Hive-style partition_* tables match their bounds and folders", () => {
  const tables = [
    "partition_bigint",
    "partition_binary",
    "partition_bool",
    "partition_decimal_bigint",
    "partition_decimal_hugeint",
    "partition_decimal_integer",
    "partition_decimal_smallint",
    "partition_double",
    "partition_fixed_length_binary/default.db/partition_fixed_length_binary",
    "partition_float",
    "partition_integer",
    "partition_time/default.db/partition_time",
    "partition_timestamp/default.db/partition_timestamp",
    "partition_timestamptz/default.db/partition_timestamptz",
    "hive_partitioned_table",
  ];

  it.each(tables)("%s", async (name) => {
    const { table, files } = await open(name);
    expect(files.length).toBeGreaterThan(1);
    const distinct = new Set<string>();
    for (const file of files) {
      const columns = await columnsById(localPath(table, file));
      for (const field of partitionSpecById(table, file.specId).fields) {
        const type = sourceType(table, field.sourceId);
        const value = file.partitionById.get(field.fieldId) ?? null;
        expect(file.partition[field.name]).toEqual(value);
        expect(resultType(field.transform, type)).toEqual(type);
        // The writer left the column out of the file; the manifest's bounds still describe it.
        expect(columns.has(field.sourceId)).toBe(false);
        if (file.lowerBounds.has(field.sourceId)) {
          expect(applyTransform(field.transform, type, file.lowerBounds.get(field.sourceId) ?? null)).toEqual(
            value,
          );
          expect(applyTransform(field.transform, type, file.upperBounds.get(field.sourceId) ?? null)).toEqual(
            value,
          );
        }
        const folder = file.path.split("/").find((s) => s.startsWith(`${field.name}=`));
        const recorded = decodeURIComponent(folder?.slice(field.name.length + 1) ?? "");
        const human = humanString(field.transform, type, value);
        if (type.kind === "primitive" && type.name === "timestamptz") {
          // pyiceberg writes the offset as +00:00 where Java writes Z; both name the same instant.
          expect(human.endsWith("Z")).toBe(true);
          expect(parseTimestamp(recorded, 1_000_000n)).toBe(value);
        } else expect(recorded).toBe(human);
        distinct.add(human);
      }
    }
    expect(distinct.size).toBeGreaterThan(1);
  });

  it("types every time transform of the v3 timestamptz_ns table as the spec does", async () => {
    const table = await loadIcebergTable(new FileStore(join(ICEBERG_FIXTURES, "timestamptz_ns")));
    const spec = partitionSpecById(table, table.metadata.defaultSpecId);
    const source = sourceType(table, spec.fields[0]?.sourceId ?? -1);
    expect(source).toEqual({ kind: "primitive", name: "timestamptz_ns" });
    expect(spec.fields.map((f) => [f.name, resultType(f.transform, source)])).toEqual([
      ["val_year", { kind: "primitive", name: "int" }],
      ["val_month", { kind: "primitive", name: "int" }],
      ["val_day", { kind: "primitive", name: "date" }],
      ["val_hour", { kind: "primitive", name: "int" }],
    ]);
    expect(currentSchema(table).fields.map((f) => f.name)).toContain("val");
  });
});
