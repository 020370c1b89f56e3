/**
 * The DuckDB SQL types of an Iceberg schema, for a rewrite that reads and writes its data files.
 * Same shape as the Delta mapping (`delta/schema.ts` `duckdbColumns`): top-level columns in schema
 * order, each `{ name, type }`. Iceberg keeps partition source columns in the data files, so no
 * column is left out.
 *
 * Types without a lossless DuckDB counterpart throw `IcebergError("unsupported")`:
 * `timestamptz_ns` (DuckDB has no zoned nanosecond timestamp) and any unsupported type. `fixed[L]`
 * maps to BLOB: the values survive, the fixed length is not enforced.
 *
 * @example
 * duckdbColumns(currentSchema(table)); // [{ name: "l_orderkey", type: "BIGINT" }, ...]
 */
import { sqlIdent } from "../engine/duckdb.ts";
import { IcebergError } from "./errors.ts";
import type { IcebergSchema, IcebergType, PrimitiveName } from "./schema.ts";

const DUCKDB_PRIMITIVES: Record<PrimitiveName, string | null> = {
  boolean: "BOOLEAN",
  int: "INTEGER",
  long: "BIGINT",
  float: "FLOAT",
  double: "DOUBLE",
  date: "DATE",
  time: "TIME",
  timestamp: "TIMESTAMP",
  timestamptz: "TIMESTAMPTZ",
  timestamp_ns: "TIMESTAMP_NS",
  timestamptz_ns: null,
  string: "VARCHAR",
  uuid: "UUID",
  binary: "BLOB",
};

/** The DuckDB SQL type of an Iceberg type; throws `IcebergError` for one the agent can't rewrite. */
export function duckdbType(type: IcebergType): string {
  switch (type.kind) {
    case "primitive": {
      const sql = DUCKDB_PRIMITIVES[type.name];
      if (!sql) throw new IcebergError("unsupported", `the type '${type.name}' has no DuckDB counterpart`);
      return sql;
    }
    case "decimal":
      return `DECIMAL(${type.precision},${type.scale})`;
    case "fixed":
      return "BLOB";
    case "struct":
      return `STRUCT(${type.fields.map((f) => `${sqlIdent(f.name)} ${duckdbType(f.type)}`).join(", ")})`;
    case "list":
      return `${duckdbType(type.element)}[]`;
    case "map":
      return `MAP(${duckdbType(type.key)}, ${duckdbType(type.value)})`;
    case "unsupported":
      throw new IcebergError("unsupported", `the type '${type.name}' is not one the agent can rewrite`);
  }
}

/** The table's columns in schema order with their DuckDB types, for the rewrite. */
export function duckdbColumns(schema: IcebergSchema): { name: string; type: string }[] {
  return schema.fields.map((f) => {
    try {
      return { name: f.name, type: duckdbType(f.type) };
    } catch (err) {
      throw new IcebergError("unsupported", `column '${f.name}': ${(err as Error).message}`);
    }
  });
}
