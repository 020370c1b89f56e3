/**
 * What the Iceberg format translates between Iceberg and the rest of the agent: bounds the
 * writer's statistics state exactly, as Iceberg values; bounds as the text a date range compares;
 * types in the recipe's words; the schema's field ids as DuckDB's `FIELD_IDS` option.
 */
import {
  formatDate,
  formatTimestamp,
  type IcebergSchema,
  type IcebergType,
  type IcebergValue,
} from "../iceberg/index.ts";

/**
 * A bound the writer's statistics give exactly, as an Iceberg value; null where they don't (or
 * might not): a wrong bound makes readers skip rows, a missing one only costs skipping. Integers
 * beyond 2^53, timestamps (the statistics keep milliseconds), decimals and binary get none.
 */
export function boundValue(type: IcebergType, value: unknown): IcebergValue | null {
  if (value === undefined || value === null || type.kind !== "primitive") return null;
  switch (type.name) {
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
    case "long":
      return typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : null;
    case "float":
    case "double":
      return typeof value === "number" && Number.isFinite(value) ? value : null;
    case "date":
      return typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value) ? daysOf(value) : null;
    case "string":
      return typeof value === "string" ? value : null;
    default:
      return null;
  }
}

function daysOf(date: string): number {
  return Math.round(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
}

/** `2026-01-01` for a date, an ISO timestamp for a timestamp; undefined for other types. */
export function dateText(type: IcebergType, value: IcebergValue): string | undefined {
  if (type.kind !== "primitive") return undefined;
  if (type.name === "date" && typeof value === "number") return formatDate(value);
  if (typeof value !== "bigint") return undefined;
  if (type.name === "timestamp" || type.name === "timestamptz") return formatTimestamp(value, 1_000_000n);
  if (type.name === "timestamp_ns" || type.name === "timestamptz_ns")
    return formatTimestamp(value, 1_000_000_000n);
  return undefined;
}

/** An Iceberg type in the recipe's words (Delta's type names, which onboarding's inference reads). */
export function recipeType(type: IcebergType): string {
  if (type.kind === "decimal" || type.kind === "fixed") return type.kind === "decimal" ? "decimal" : "binary";
  if (type.kind !== "primitive") return type.kind;
  const names: Partial<Record<string, string>> = {
    int: "integer",
    timestamptz: "timestamp",
    timestamp: "timestamp_ntz",
    timestamptz_ns: "timestamp",
    timestamp_ns: "timestamp_ntz",
  };
  return names[type.name] ?? type.name;
}

/** DuckDB's `FIELD_IDS` value for the schema: every column, struct field, list element and map key/value. */
export function fieldIdsLiteral(schema: IcebergSchema): string {
  const quote = (name: string) => `'${name.replaceAll("'", "''")}'`;
  const nested = (id: number, type: IcebergType): string => {
    const children =
      type.kind === "struct"
        ? type.fields.map((f) => `${quote(f.name)}: ${nested(f.id, f.type)}`)
        : type.kind === "list"
          ? [`element: ${nested(type.elementId, type.element)}`]
          : type.kind === "map"
            ? [`key: ${nested(type.keyId, type.key)}`, `value: ${nested(type.valueId, type.value)}`]
            : [];
    return children.length === 0 ? String(id) : `{__duckdb_field_id: ${id}, ${children.join(", ")}}`;
  };
  return `{${schema.fields.map((f) => `${quote(f.name)}: ${nested(f.id, f.type)}`).join(", ")}}`;
}
