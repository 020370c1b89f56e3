/**
 * Column profiles for onboarding inspection: on a bounded sample of a table's files, each column's
 * approximate distinct count, null fraction, min/max and DuckDB type. Turning them into cluster and
 * enumerated columns is the recipe's job (`inspect/recipe.ts`).
 *
 * The sample is the first `sampleRows` rows of the first `sampleFiles` files: its cost does not grow
 * with the table. Distinct counts are HyperLogLog estimates (`approx_count_distinct`), a few percent off.
 *
 * @example
 * const profiles = await profileColumns(engine, files, columns);
 * const recipe = inferRecipe([], columnFacts(profiles, deltaTypeOf));
 */
import { canonicalTypes, readAsColumns, type TableColumn } from "./checksum.ts";
import { type Engine, sqlIdent } from "./duckdb.ts";

export interface ColumnProfile {
  name: string;
  /** DuckDB's canonical type, for example `TIMESTAMP WITH TIME ZONE`. */
  type: string;
  /** Rows in the sample. */
  sampleRows: number;
  nullFraction: number;
  approxDistinct: number;
  /** As text; null for complex types and all-null columns. */
  min: string | null;
  max: string | null;
}

export interface ProfileOptions {
  /** Rows read at most (default 200,000). */
  sampleRows?: number;
  /** Files read at most, first in the given order (default 16). */
  sampleFiles?: number;
}

/** Profiles `columns` on a bounded sample of `files` (one scan). */
export async function profileColumns(
  engine: Engine,
  files: readonly string[],
  columns: readonly TableColumn[],
  options: ProfileOptions = {},
): Promise<ColumnProfile[]> {
  if (files.length === 0 || columns.length === 0) return [];
  const sample = files.slice(0, options.sampleFiles ?? 16);
  const select = await readAsColumns(engine, sample, columns);
  const types = await canonicalTypes(
    engine,
    columns.map((c) => c.type),
  );
  const aggregates = columns.flatMap((c, i) => {
    const col = sqlIdent(c.name);
    const ordered = !isComplex(types[i] as string);
    return [
      `count(${col}) as n_${i}`,
      `approx_count_distinct(${col}) as d_${i}`,
      `${ordered ? `min(${col})::varchar` : "NULL"} as lo_${i}`,
      `${ordered ? `max(${col})::varchar` : "NULL"} as hi_${i}`,
    ];
  });
  const [row = {}] = await engine.query(
    `select count(*) as rows, ${aggregates.join(", ")} from (${select} limit ${options.sampleRows ?? 200_000})`,
  );
  const rows = Number(row.rows ?? 0);
  return columns.map((c, i) => ({
    name: c.name,
    type: types[i] as string,
    sampleRows: rows,
    nullFraction: rows === 0 ? 0 : 1 - Number(row[`n_${i}`] ?? 0) / rows,
    approxDistinct: Number(row[`d_${i}`] ?? 0),
    min: (row[`lo_${i}`] as string | null) ?? null,
    max: (row[`hi_${i}`] as string | null) ?? null,
  }));
}

function isComplex(type: string): boolean {
  return (
    type.startsWith("STRUCT(") || type.startsWith("MAP(") || type.startsWith("UNION(") || type.endsWith("]")
  );
}
