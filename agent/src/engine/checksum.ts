/**
 * The proof that a crunch rewrite is lossless (architecture.md, "The agent"): an order-insensitive
 * content checksum of a set of Parquet files, read as the table's columns, computed the same way for
 * the inputs and the outputs and compared before anything is committed.
 *
 * The proof is the row count, each column's number of non-null values and the row checksum: the sum
 * of DuckDB's 64-bit `hash(c1, ..., cn)` over whole rows, summed exactly as a HUGEINT (no overflow
 * below 2^64 rows). A sum does not depend on row order or on how rows are split into files. The row
 * hash combines every column's value hash in column order (`hash(1, 2) ≠ hash(2, 1)`), so a changed,
 * dropped or duplicated value in any column, a value moved between rows and values swapped between
 * columns all change it: it is an order-insensitive checksum of every column, in one hash per row.
 *
 * Per-column hash sums (`hash` of each value, summed) prove nothing more but name the column that
 * differs. They cost a second hash and a HUGEINT sum per value (2.5x the scan on measured tables), so
 * the regular checksum leaves them out and `explainMismatch` computes them only after a mismatch.
 *
 * @example
 * const expected = await checksumFiles(engine, inputs, columns);
 * const problems = compareChecksums(expected, written.checksum);
 * if (problems.length > 0) throw new Error(`rewrite is not lossless: ${problems.join("; ")}`);
 */
import { type Engine, sqlIdent, sqlList, sqlString } from "./duckdb.ts";

/** One column of the table as the rewrite writes it: its name and the DuckDB type its schema maps to. */
export interface TableColumn {
  name: string;
  /** A DuckDB SQL type, for example `TIMESTAMPTZ`, `DECIMAL(10,2)`, `STRUCT(a INTEGER, b VARCHAR)`. */
  type: string;
  /**
   * A SQL expression for the column's value where a file does not hold it (an Iceberg identity
   * partition's value, which some writers keep in the metadata only); absent, such values are NULL.
   */
  fill?: string;
}

export interface ColumnChecksum {
  name: string;
  /** Non-null values. */
  count: number;
  /** Sum of `hash(value)` over all rows, as decimal text; only in a `perColumn` checksum. */
  hash?: string;
}

export interface ChecksumOptions {
  /** Also sum each column's value hashes, to name the column that differs (`explainMismatch`). */
  perColumn?: boolean;
}

export interface Checksum {
  rows: number;
  /** Sum of `hash(c1, ..., cn)` over whole rows, as decimal text. */
  rowHash: string;
  columns: ColumnChecksum[];
}

/**
 * A `SELECT` list reading Parquet files as exactly `columns`, in order, cast to their types. Files
 * written before a column was added read it as NULL (`union_by_name`); a column that no file has is
 * NULL too, or the column's `fill` where it has one. With `filename`, the source file's path comes
 * along as the column `filename`.
 */
export async function readAsColumns(
  engine: Engine,
  files: readonly string[],
  columns: readonly TableColumn[],
  options: { filename?: boolean } = {},
): Promise<string> {
  const source = `read_parquet(${sqlList(files)}, union_by_name = true${options.filename ? ", filename = true" : ""})`;
  const present = new Set(
    (await engine.query<{ column_name: string }>(`describe select * from ${source}`)).map((r) =>
      r.column_name.toLowerCase(),
    ),
  );
  const list = columns.map((c) => {
    const fill = c.fill ? `cast(${c.fill} as ${c.type})` : "NULL";
    const value = present.has(c.name.toLowerCase())
      ? c.fill
        ? `coalesce(${sqlIdent(c.name)}, ${fill})`
        : sqlIdent(c.name)
      : fill;
    return `cast(${value} as ${c.type}) as ${sqlIdent(c.name)}`;
  });
  if (options.filename) list.push("filename");
  return `select ${list.join(", ")} from ${source}`;
}

/** The aggregate expressions of a checksum over a relation that has exactly `columns`. */
export function checksumAggregates(columns: readonly TableColumn[], options: ChecksumOptions = {}): string {
  const parts = ["count(*) as ck_rows"];
  columns.forEach((c, i) => {
    parts.push(`count(${sqlIdent(c.name)}) as ck_count_${i}`);
    if (options.perColumn) parts.push(`sum(hash(${sqlIdent(c.name)}))::varchar as ck_hash_${i}`);
  });
  const all = columns.map((c) => sqlIdent(c.name)).join(", ");
  parts.push(
    columns.length > 0 ? `coalesce(sum(hash(${all})), 0)::varchar as ck_row_hash` : "'0' as ck_row_hash",
  );
  return parts.join(", ");
}

/** Reads a checksum back from a row of `checksumAggregates` (or several rows, one per file, summed). */
export function checksumFromRows(
  columns: readonly TableColumn[],
  rows: readonly Record<string, unknown>[],
): Checksum {
  const big = (v: unknown) => BigInt(v === null || v === undefined ? 0 : String(v));
  const sum = (key: string) => rows.reduce((s, r) => s + big(r[key]), 0n);
  const perColumn = rows.some((r) => "ck_hash_0" in r);
  return {
    rows: Number(sum("ck_rows")),
    rowHash: sum("ck_row_hash").toString(),
    columns: columns.map((c, i) => ({
      name: c.name,
      count: Number(sum(`ck_count_${i}`)),
      ...(perColumn ? { hash: sum(`ck_hash_${i}`).toString() } : {}),
    })),
  };
}

/**
 * The checksum of the union of disjoint sets of rows, from each set's checksum: counts and hash sums
 * add up (per-column hashes too, where every part has them).
 */
export function sumChecksums(columns: readonly TableColumn[], parts: readonly Checksum[]): Checksum {
  const perColumn = parts.length > 0 && parts.every((p) => p.columns.every((c) => c.hash !== undefined));
  return {
    rows: parts.reduce((n, p) => n + p.rows, 0),
    rowHash: parts.reduce((s, p) => s + BigInt(p.rowHash), 0n).toString(),
    columns: columns.map((c, i) => ({
      name: c.name,
      count: parts.reduce((n, p) => n + (p.columns[i]?.count ?? 0), 0),
      ...(perColumn
        ? { hash: parts.reduce((s, p) => s + BigInt(p.columns[i]?.hash ?? 0), 0n).toString() }
        : {}),
    })),
  };
}

/** The content checksum of Parquet files read as `columns` (one scan). */
export async function checksumFiles(
  engine: Engine,
  files: readonly string[],
  columns: readonly TableColumn[],
  options: ChecksumOptions = {},
): Promise<Checksum> {
  return checksumOf(engine, await readAsColumns(engine, files, columns), columns, options);
}

/** The content checksum of a `SELECT` with exactly `columns`, such as `readAsColumns` builds (one scan). */
export async function checksumOf(
  engine: Engine,
  select: string,
  columns: readonly TableColumn[],
  options: ChecksumOptions = {},
): Promise<Checksum> {
  const rows = await engine.query(`select ${checksumAggregates(columns, options)} from (${select})`);
  return checksumFromRows(columns, rows);
}

/**
 * After `compareChecksums` found a difference: compares per-column checksums of the inputs and the
 * outputs (two more scans), so the report names the columns whose values changed.
 */
export async function explainMismatch(
  engine: Engine,
  inputs: readonly string[],
  outputs: readonly string[],
  columns: readonly TableColumn[],
): Promise<string[]> {
  return compareChecksums(
    await checksumFiles(engine, inputs, columns, { perColumn: true }),
    await checksumFiles(engine, outputs, columns, { perColumn: true }),
  );
}

/**
 * What differs between the checksum of the inputs and that of the outputs, one line each; empty when
 * they match. Names the column whose values changed, or says that values moved between rows.
 */
export function compareChecksums(expected: Checksum, actual: Checksum): string[] {
  const names = (c: Checksum) => c.columns.map((x) => x.name).join(", ");
  if (names(expected) !== names(actual)) {
    return [`schema mismatch: expected columns [${names(expected)}], got [${names(actual)}]`];
  }
  const problems: string[] = [];
  if (expected.rows !== actual.rows)
    problems.push(`row count: expected ${expected.rows}, got ${actual.rows}`);
  expected.columns.forEach((e, i) => {
    const a = actual.columns[i] as ColumnChecksum;
    if (e.count !== a.count)
      problems.push(`column ${e.name}: expected ${e.count} non-null values, got ${a.count}`);
    else if (e.hash !== undefined && a.hash !== undefined && e.hash !== a.hash)
      problems.push(`column ${e.name}: values differ (checksum ${e.hash} ≠ ${a.hash})`);
  });
  if (problems.length === 0 && expected.rowHash !== actual.rowHash) {
    const perColumn = expected.columns.every((c) => c.hash !== undefined);
    problems.push(
      perColumn
        ? "rows differ: every column holds the same values, but not in the same rows"
        : `rows differ (row checksum ${expected.rowHash} ≠ ${actual.rowHash}): a value changed or moved; ` +
            "explainMismatch names the columns",
    );
  }
  return problems;
}

/** DuckDB's canonical spelling of each type (`TIMESTAMPTZ` → `TIMESTAMP WITH TIME ZONE`), in one query. */
export async function canonicalTypes(engine: Engine, types: readonly string[]): Promise<string[]> {
  if (types.length === 0) return [];
  const [row] = await engine.query<Record<string, string>>(
    `select ${types.map((t, i) => `typeof(cast(NULL as ${t})) as t${i}`).join(", ")}`,
  );
  return types.map((_, i) => String(row?.[`t${i}`]));
}

/**
 * Compares the schema of written Parquet files, as DuckDB reads them, with `columns`: same names in
 * the same order, same types. Returns one line per difference; empty when they match.
 */
export async function checkSchema(
  engine: Engine,
  files: readonly string[],
  columns: readonly TableColumn[],
): Promise<string[]> {
  const expected = await canonicalTypes(
    engine,
    columns.map((c) => c.type),
  );
  const problems: string[] = [];
  for (const file of files) {
    const actual = await engine.query<{ column_name: string; column_type: string }>(
      `describe select * from read_parquet(${sqlString(file)})`,
    );
    const got = actual.map((r) => `${r.column_name} ${r.column_type}`).join(", ");
    const want = columns.map((c, i) => `${c.name} ${expected[i]}`).join(", ");
    if (got !== want) problems.push(`schema mismatch in ${file}: expected [${want}], got [${got}]`);
  }
  return problems;
}
