/**
 * Iceberg schemas (spec "Schemas and Data Types") as a typed tree: every field, list element and
 * map key/value carries its field id, which is what identifies a column across renames and
 * reorders; names are only for people and SQL.
 *
 * Parsing never fails on a type it does not know (v3's `variant`, `geometry`, `unknown`, or a
 * newer one): such a type becomes `unsupported`, so the table still loads and is refused with a
 * reason. It fails only on JSON that is not a schema at all.
 *
 * @example
 * const schema = currentSchema(table);
 * fieldById(schema, 3)?.path; // ["profile", "email"]
 */
import { IcebergError } from "./errors.ts";

export type PrimitiveName =
  | "boolean"
  | "int"
  | "long"
  | "float"
  | "double"
  | "date"
  | "time"
  | "timestamp"
  | "timestamptz"
  | "timestamp_ns"
  | "timestamptz_ns"
  | "string"
  | "uuid"
  | "binary";

export type IcebergType =
  | { kind: "primitive"; name: PrimitiveName }
  | { kind: "decimal"; precision: number; scale: number }
  | { kind: "fixed"; length: number }
  | StructType
  | { kind: "list"; elementId: number; element: IcebergType; elementRequired: boolean }
  | {
      kind: "map";
      keyId: number;
      key: IcebergType;
      valueId: number;
      value: IcebergType;
      valueRequired: boolean;
    }
  /** A type the agent does not know how to read or rewrite, by its name in the metadata. */
  | { kind: "unsupported"; name: string };

/** A type that holds one value: what bounds, partition values and transforms work on. */
export type PrimitiveType = Extract<IcebergType, { kind: "primitive" | "decimal" | "fixed" }>;

export interface StructType {
  kind: "struct";
  fields: StructField[];
}

export interface StructField {
  id: number;
  name: string;
  required: boolean;
  type: IcebergType;
  doc?: string;
  /** The value readers use where a data file lacks the column (v3), as JSON; see `parseJsonValue`. */
  initialDefault?: unknown;
  /** The value writers use where a row gives none (v3), as JSON. */
  writeDefault?: unknown;
}

export interface IcebergSchema extends StructType {
  schemaId: number;
  identifierFieldIds: number[];
}

const PRIMITIVES = new Set<string>([
  "boolean",
  "int",
  "long",
  "float",
  "double",
  "date",
  "time",
  "timestamp",
  "timestamptz",
  "timestamp_ns",
  "timestamptz_ns",
  "string",
  "uuid",
  "binary",
]);

/** Parses one schema object of the table metadata (`schemas[i]`, or v1's `schema`). */
export function parseSchema(json: unknown): IcebergSchema {
  const node = json as Record<string, unknown>;
  const type = parseType(json);
  if (type.kind !== "struct") throw new IcebergError("corrupt", "a table schema is not a struct");
  const ids = node["identifier-field-ids"];
  return {
    ...type,
    schemaId: typeof node["schema-id"] === "number" ? node["schema-id"] : 0,
    identifierFieldIds: Array.isArray(ids) ? ids.map(Number) : [],
  };
}

/** Parses a type: a primitive name (`"decimal(9, 2)"`, `"fixed[16]"`, ...) or a nested type object. */
export function parseType(json: unknown): IcebergType {
  if (typeof json === "string") {
    if (PRIMITIVES.has(json)) return { kind: "primitive", name: json as PrimitiveName };
    const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(json);
    if (decimal) return { kind: "decimal", precision: Number(decimal[1]), scale: Number(decimal[2]) };
    const fixed = /^fixed\[\s*(\d+)\s*\]$/.exec(json);
    if (fixed) return { kind: "fixed", length: Number(fixed[1]) };
    return { kind: "unsupported", name: json };
  }
  if (typeof json !== "object" || json === null)
    throw new IcebergError("corrupt", `not an Iceberg type: ${JSON.stringify(json)}`);
  const node = json as Record<string, unknown>;
  switch (node.type) {
    case "struct":
      if (!Array.isArray(node.fields)) throw new IcebergError("corrupt", "a struct type has no fields array");
      return { kind: "struct", fields: node.fields.map(parseField) };
    case "list":
      return {
        kind: "list",
        elementId: Number(node["element-id"]),
        element: parseType(node.element),
        elementRequired: node["element-required"] === true,
      };
    case "map":
      return {
        kind: "map",
        keyId: Number(node["key-id"]),
        key: parseType(node.key),
        valueId: Number(node["value-id"]),
        value: parseType(node.value),
        valueRequired: node["value-required"] === true,
      };
    default:
      return { kind: "unsupported", name: String(node.type) };
  }
}

function parseField(json: unknown): StructField {
  const node = json as Record<string, unknown>;
  if (typeof node?.name !== "string" || typeof node.id !== "number")
    throw new IcebergError("corrupt", `a struct field has no name or id: ${JSON.stringify(json)}`);
  const field: StructField = {
    id: node.id,
    name: node.name,
    required: node.required === true,
    type: parseType(node.type),
  };
  if (typeof node.doc === "string") field.doc = node.doc;
  if ("initial-default" in node) field.initialDefault = node["initial-default"];
  if ("write-default" in node) field.writeDefault = node["write-default"];
  return field;
}

/** How a type is written in table metadata: `long`, `decimal(9, 2)`, `list<string>`, ... */
export function typeString(type: IcebergType): string {
  switch (type.kind) {
    case "primitive":
      return type.name;
    case "decimal":
      return `decimal(${type.precision}, ${type.scale})`;
    case "fixed":
      return `fixed[${type.length}]`;
    case "struct":
      return `struct<${type.fields.map((f) => `${f.name}: ${typeString(f.type)}`).join(", ")}>`;
    case "list":
      return `list<${typeString(type.element)}>`;
    case "map":
      return `map<${typeString(type.key)}, ${typeString(type.value)}>`;
    case "unsupported":
      return type.name;
  }
}

/** One field found by id: its type and the names leading to it (`element`, `key`, `value` inside lists and maps). */
export interface FoundField {
  id: number;
  path: string[];
  type: IcebergType;
  /** The struct field, where the id is one (not a list element or map key/value). */
  field?: StructField;
}

/** Every field id of a type, nested ones included, in schema order. */
export function fieldIndex(type: StructType): Map<number, FoundField> {
  const index = new Map<number, FoundField>();
  const visit = (t: IcebergType, path: string[]) => {
    if (t.kind === "struct")
      for (const f of t.fields) {
        index.set(f.id, { id: f.id, path: [...path, f.name], type: f.type, field: f });
        visit(f.type, [...path, f.name]);
      }
    else if (t.kind === "list") {
      index.set(t.elementId, { id: t.elementId, path: [...path, "element"], type: t.element });
      visit(t.element, [...path, "element"]);
    } else if (t.kind === "map") {
      index.set(t.keyId, { id: t.keyId, path: [...path, "key"], type: t.key });
      index.set(t.valueId, { id: t.valueId, path: [...path, "value"], type: t.value });
      visit(t.key, [...path, "key"]);
      visit(t.value, [...path, "value"]);
    }
  };
  visit(type, []);
  return index;
}

/** The field with id `id` anywhere in the schema, or undefined. */
export function fieldById(schema: StructType, id: number): FoundField | undefined {
  return fieldIndex(schema).get(id);
}

/** The first type in `type` the agent can't handle, by name, or null. */
export function unsupportedIn(type: IcebergType): string | null {
  switch (type.kind) {
    case "unsupported":
      return type.name;
    case "struct":
      for (const f of type.fields) {
        const found = unsupportedIn(f.type);
        if (found) return found;
      }
      return null;
    case "list":
      return unsupportedIn(type.element);
    case "map":
      return unsupportedIn(type.key) ?? unsupportedIn(type.value);
    default:
      return null;
  }
}

/** True for types that hold a single value (what bounds and partition values describe). */
export function isPrimitive(type: IcebergType): type is PrimitiveType {
  return type.kind === "primitive" || type.kind === "decimal" || type.kind === "fixed";
}
