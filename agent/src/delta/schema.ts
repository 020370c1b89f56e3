/**
 * The Delta schema (`metaData.schemaString`, Spark's JSON schema) as a typed tree, and its mapping
 * to DuckDB types for the rewrite. Parsing never fails on a type it does not know: such a type
 * becomes `unsupported`, so a table with one still loads and is refused with a reason
 * (`schemaRefusal`) instead of breaking the snapshot.
 *
 * @example
 * const schema = parseSchema(snapshot.metadata.schemaString);
 * duckdbColumns(schema, ["date"]); // [{ name: "id", type: "BIGINT" }, ...] without "date"
 */
import { sqlIdent } from "../engine/duckdb.ts";

export type PrimitiveName =
  | "string"
  | "long"
  | "integer"
  | "short"
  | "byte"
  | "float"
  | "double"
  | "boolean"
  | "binary"
  | "date"
  | "timestamp"
  | "timestamp_ntz";

export type DataType =
  | { kind: "primitive"; name: PrimitiveName }
  | { kind: "decimal"; precision: number; scale: number }
  | StructType
  | { kind: "array"; elementType: DataType; containsNull: boolean }
  | { kind: "map"; keyType: DataType; valueType: DataType; valueContainsNull: boolean }
  /** A type the agent can't rewrite (variant, void, interval, or one it has never heard of). */
  | { kind: "unsupported"; name: string };

export interface StructType {
  kind: "struct";
  fields: StructField[];
}

export interface StructField {
  name: string;
  type: DataType;
  nullable: boolean;
  metadata: Record<string, unknown>;
}

const PRIMITIVES: Record<string, PrimitiveName> = {
  string: "string",
  long: "long",
  bigint: "long",
  integer: "integer",
  int: "integer",
  short: "short",
  smallint: "short",
  byte: "byte",
  tinyint: "byte",
  float: "float",
  double: "double",
  boolean: "boolean",
  binary: "binary",
  date: "date",
  timestamp: "timestamp",
  timestamp_ntz: "timestamp_ntz",
};

const DUCKDB_PRIMITIVES: Record<PrimitiveName, string> = {
  string: "VARCHAR",
  long: "BIGINT",
  integer: "INTEGER",
  short: "SMALLINT",
  byte: "TINYINT",
  float: "FLOAT",
  double: "DOUBLE",
  boolean: "BOOLEAN",
  binary: "BLOB",
  date: "DATE",
  timestamp: "TIMESTAMPTZ",
  timestamp_ntz: "TIMESTAMP",
};

/** Thrown for a schema string that is not a Delta schema at all (not for types it can't rewrite). */
export class DeltaSchemaError extends Error {
  override readonly name = "DeltaSchemaError";
}

/** Parses `metaData.schemaString` into a struct type. */
export function parseSchema(schemaString: string): StructType {
  let json: unknown;
  try {
    json = JSON.parse(schemaString);
  } catch (err) {
    throw new DeltaSchemaError(`the table schema is not valid JSON: ${(err as Error).message}`);
  }
  const type = parseType(json);
  if (type.kind !== "struct") throw new DeltaSchemaError("the table schema is not a struct");
  return type;
}

function parseType(json: unknown): DataType {
  if (typeof json === "string") {
    const primitive = PRIMITIVES[json];
    if (primitive) return { kind: "primitive", name: primitive };
    const decimal = /^decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)$/.exec(json);
    if (decimal) return { kind: "decimal", precision: Number(decimal[1]), scale: Number(decimal[2]) };
    if (json === "decimal") return { kind: "decimal", precision: 10, scale: 0 };
    return { kind: "unsupported", name: json };
  }
  if (typeof json !== "object" || json === null) throw new DeltaSchemaError(`not a type: ${String(json)}`);
  const node = json as Record<string, unknown>;
  switch (node.type) {
    case "struct": {
      if (!Array.isArray(node.fields)) throw new DeltaSchemaError("a struct type has no fields array");
      return { kind: "struct", fields: node.fields.map(parseField) };
    }
    case "array":
      return {
        kind: "array",
        elementType: parseType(node.elementType),
        containsNull: node.containsNull !== false,
      };
    case "map":
      return {
        kind: "map",
        keyType: parseType(node.keyType),
        valueType: parseType(node.valueType),
        valueContainsNull: node.valueContainsNull !== false,
      };
    default:
      return { kind: "unsupported", name: String(node.type) };
  }
}

function parseField(json: unknown): StructField {
  const node = json as Record<string, unknown>;
  if (typeof node?.name !== "string") throw new DeltaSchemaError("a struct field has no name");
  return {
    name: node.name,
    type: parseType(node.type),
    nullable: node.nullable !== false,
    metadata: (node.metadata as Record<string, unknown> | undefined) ?? {},
  };
}

/** The DuckDB SQL type of a Delta type; throws `DeltaSchemaError` for one the agent can't rewrite. */
export function duckdbType(type: DataType): string {
  switch (type.kind) {
    case "primitive":
      return DUCKDB_PRIMITIVES[type.name];
    case "decimal":
      return `DECIMAL(${type.precision},${type.scale})`;
    case "struct":
      return `STRUCT(${type.fields.map((f) => `${sqlIdent(f.name)} ${duckdbType(f.type)}`).join(", ")})`;
    case "array":
      return `${duckdbType(type.elementType)}[]`;
    case "map":
      return `MAP(${duckdbType(type.keyType)}, ${duckdbType(type.valueType)})`;
    case "unsupported":
      throw new DeltaSchemaError(`the type '${type.name}' is not one the agent can rewrite`);
  }
}

/** The data (non-partition) columns in schema order with their DuckDB types, for the rewrite. */
export function duckdbColumns(
  schema: StructType,
  partitionColumns: readonly string[],
): { name: string; type: string }[] {
  const partitions = new Set(partitionColumns);
  return schema.fields
    .filter((f) => !partitions.has(f.name))
    .map((f) => {
      try {
        return { name: f.name, type: duckdbType(f.type) };
      } catch (err) {
        throw new DeltaSchemaError(`column '${f.name}': ${(err as Error).message}`);
      }
    });
}

/** Why the schema can't be rewritten (the first column with a type the agent can't map), or null. */
export function schemaRefusal(schema: StructType): string | null {
  for (const field of schema.fields) {
    const found = unsupportedIn(field.type);
    if (found) return `column '${field.name}' has type '${found}', which the agent can't rewrite`;
  }
  return null;
}

function unsupportedIn(type: DataType): string | null {
  switch (type.kind) {
    case "unsupported":
      return type.name;
    case "struct":
      for (const f of type.fields) {
        const found = unsupportedIn(f.type);
        if (found) return found;
      }
      return null;
    case "array":
      return unsupportedIn(type.elementType);
    case "map":
      return unsupportedIn(type.keyType) ?? unsupportedIn(type.valueType);
    default:
      return null;
  }
}
