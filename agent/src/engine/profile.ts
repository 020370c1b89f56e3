/**
 * Column profiles for onboarding inspection: on a bounded sample of a table's files, each column's
 * approximate distinct count, null fraction, min/max and DuckDB type, and the pure heuristics that turn
 * profiles into candidate cluster columns (sort keys for crunch) and enumerated columns.
 *
 * The sample is the first `sampleRows` rows of the first `sampleFiles` files: its cost does not grow
 * with the table. Distinct counts are HyperLogLog estimates (`approx_count_distinct`), a few percent off.
 *
 * @example
 * const profiles = await profileColumns(engine, files, columns);
 * const cluster = pickClusterColumns(profiles); // ["event_time"]
 * const enumerated = pickEnumeratedColumns(profiles); // ["country", "status"]
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

/** At most this many distinct values in the sample make a column enumerated. */
export const ENUMERATED_MAX_DISTINCT = 50;

const ENUMERABLE = /^(VARCHAR|BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|UTINYINT|USMALLINT|UINTEGER)$/;
const TEMPORAL = /^(TIMESTAMP WITH TIME ZONE|TIMESTAMP|TIMESTAMP_NS|TIMESTAMP_MS|DATE)$/;
const ID_NAME = /(^id$|_id$|Id$|_key$|_uuid$|^uuid$)/;
const ID_TYPE = /^(VARCHAR|INTEGER|BIGINT|UUID|HUGEINT)$/;

/**
 * Columns with few distinct values (≤ `maxDistinct` in the sample: countries, statuses, flags), fewest
 * first. Sorting by them first makes long runs that dictionary and RLE encodings compress well.
 */
export function pickEnumeratedColumns(
  profiles: readonly ColumnProfile[],
  maxDistinct = ENUMERATED_MAX_DISTINCT,
): string[] {
  return profiles
    .filter((p) => ENUMERABLE.test(p.type) && p.nullFraction < 1 && p.approxDistinct <= maxDistinct)
    .sort((a, b) => a.approxDistinct - b.approxDistinct)
    .map((p) => p.name);
}

/**
 * Candidate cluster columns, best first, at most `max`: the columns queries most often filter on and
 * that have enough distinct values for min/max skipping to prune files. Timestamps and dates first,
 * then id-like columns (`id`, `*_id`, `*_key`); all-null-ish (≥ 50% null) and enumerated columns are
 * left out.
 */
export function pickClusterColumns(profiles: readonly ColumnProfile[], max = 2): string[] {
  const useful = profiles.filter(
    (p) => p.nullFraction < 0.5 && p.approxDistinct > ENUMERATED_MAX_DISTINCT && p.sampleRows > 0,
  );
  const temporal = useful.filter((p) => TEMPORAL.test(p.type));
  const ids = useful.filter((p) => ID_TYPE.test(p.type) && ID_NAME.test(p.name));
  const byDistinct = (a: ColumnProfile, b: ColumnProfile) => b.approxDistinct - a.approxDistinct;
  return [...temporal.sort(byDistinct), ...ids.sort(byDistinct)].slice(0, max).map((p) => p.name);
}
