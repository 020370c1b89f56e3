/**
 * How many bytes a row of a table takes in DuckDB's memory, estimated without loading rows into a
 * table: what a crunch too small for trials sizes its row groups by (tune.ts), where measuring a
 * loaded sample would cost more than the estimate is worth.
 *
 * A flat column takes its type's width in DuckDB's vectors (a `DECIMAL(12,2)` is 8 bytes); a string
 * or blob takes 16 bytes, plus its length when longer than the 12 bytes DuckDB keeps inline. String
 * lengths are averaged over the first `ROWS` rows of the files, in one aggregate query. Nested types
 * (lists, structs, maps, unions) and types not known here have no estimate: the answer is then null
 * and the caller measures instead.
 *
 * @example
 * const bytes = await estimateRowBytes(engine, inputs, columns); // 68, or null for a nested column
 */
import { readAsColumns, type TableColumn } from "./checksum.ts";
import { type Engine, sqlIdent } from "./duckdb.ts";

/** Rows whose string lengths are averaged. */
const ROWS = 2048;
/** Bytes of a string DuckDB keeps inline in its 16-byte value; longer ones live in a heap beside it. */
const INLINE_STRING_BYTES = 12;
const STRING_VALUE_BYTES = 16;

/** Widths of flat types in DuckDB's vectors, by the type's name (without its parameters). */
const WIDTHS: Record<string, number> = {
  BOOLEAN: 1,
  TINYINT: 1,
  UTINYINT: 1,
  SMALLINT: 2,
  USMALLINT: 2,
  INTEGER: 4,
  UINTEGER: 4,
  BIGINT: 8,
  UBIGINT: 8,
  HUGEINT: 16,
  UHUGEINT: 16,
  FLOAT: 4,
  REAL: 4,
  DOUBLE: 8,
  DATE: 4,
  TIME: 8,
  TIMETZ: 8,
  TIMESTAMP: 8,
  TIMESTAMPTZ: 8,
  TIMESTAMP_S: 8,
  TIMESTAMP_MS: 8,
  TIMESTAMP_NS: 8,
  INTERVAL: 16,
  UUID: 16,
};
const STRING_TYPES = new Set(["VARCHAR", "BLOB"]);

/**
 * DuckDB's width of a value of `type`: a number of bytes, "string" for variable-length values, or
 * null for a nested or unknown type.
 */
export function typeWidth(type: string): number | "string" | null {
  const t = type
    .trim()
    .toUpperCase()
    .replace(/\s+WITH TIME ZONE$/, "TZ");
  const decimal = /^(?:DECIMAL|NUMERIC)\((\d+)\s*,\s*\d+\)$/.exec(t);
  if (decimal) {
    const precision = Number(decimal[1]);
    return precision <= 4 ? 2 : precision <= 9 ? 4 : precision <= 18 ? 8 : 16;
  }
  if (STRING_TYPES.has(t)) return "string";
  return WIDTHS[t] ?? null;
}

/**
 * Estimated bytes per row of `columns` read from `files` (see the module comment); null when a column
 * is nested or of a type not known here.
 */
export async function estimateRowBytes(
  engine: Engine,
  files: readonly string[],
  columns: readonly TableColumn[],
): Promise<number | null> {
  const widths = columns.map((c) => typeWidth(c.type));
  if (widths.some((w) => w === null)) return null;
  const fixed = widths.reduce<number>((n, w) => n + (typeof w === "number" ? w : STRING_VALUE_BYTES), 0);
  const strings = columns.filter((_, i) => widths[i] === "string");
  if (strings.length === 0 || files.length === 0) return fixed;
  const select = await readAsColumns(engine, files, columns);
  const heap = strings
    .map((c) => {
      const length = `${c.type.trim().toUpperCase() === "BLOB" ? "octet_length" : "strlen"}(${sqlIdent(c.name)})`;
      return `coalesce(avg(case when ${length} > ${INLINE_STRING_BYTES} then ${length} else 0 end), 0)`;
    })
    .join(" + ");
  const [row] = await engine.query<{ heap: number }>(`select ${heap} as heap from (${select} limit ${ROWS})`);
  return fixed + Number(row?.heap ?? 0);
}
