/**
 * The lossless schema of a JSON conversion's inputs: what DuckDB infers from every record, with the
 * inferences that would change a value undone.
 *
 * Rules (no value silently cast or dropped):
 * - Inferred from every record of every file (`sample_size = -1`, every file sampled): a key first
 *   seen in the last record, at any depth, has its column or struct field.
 * - Text stays text: DuckDB's date and timestamp detection is off (a format no text spells), so
 *   `"2026-01-01"` is read back as the string it was, not as a `DATE`.
 * - Integers stay exact: a `DOUBLE` leaf (a number that was a fraction somewhere, or an integer
 *   beyond 64 bits) is loaded as the text written and checked in the load's pass (`exactRead`);
 *   one whose records hold an integer a double cannot hold exactly becomes
 *   `DECIMAL(38,0)` when every value of it is an integer of at most 38 digits, else `JSON` (each
 *   value as written). Not `HUGEINT`: DuckDB writes it to Parquet as a double, so an inferred
 *   `HUGEINT` (integers beyond BIGINT's range, 20 digits at most) is `DECIMAL(38,0)` too.
 *   Fractions and exponents are read as doubles, as JSON parsers read them.
 * - A field that is a number in one place and text in another is `JSON` (DuckDB's widening).
 * Any temporal type left in the schema (text matching the never-spelled format) fails the run.
 */
import type { TableColumn } from "../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../engine/duckdb.ts";
import { formatType, mapScalars, parseType, type TypeNode } from "../engine/type-spelling.ts";
import { JobError } from "../registry.ts";
import { type LocalInput, misfit } from "./misfit.ts";

/** A date and timestamp format no JSON text spells: turns DuckDB's temporal detection off. */
const NO_TEMPORAL_FORMAT = "\u0001lakesmith-text\u0001%Y";
/** Integers beyond 64 bits, exactly, in a type Parquet holds (a fixed-length decimal). */
const EXACT_INTEGER = "DECIMAL(38,0)";
const TEMPORAL = /^(DATE|TIME|TIMESTAMP.*|INTERVAL)$/;

/**
 * `read_json`'s options that read the inputs exactly as the schema was inferred; the sample spans
 * `sampleFiles` files (default every file).
 */
export function readOptions(fileCount: number, sampleFiles = fileCount): string {
  const format = sqlString(NO_TEMPORAL_FORMAT);
  return `dateformat = ${format}, timestampformat = ${format}, maximum_sample_files = ${Math.max(Math.min(sampleFiles, fileCount), 1)}`;
}

export async function losslessColumns(engine: Engine, inputs: readonly LocalInput[]): Promise<TableColumn[]> {
  const paths = inputs.map((i) => i.path);
  const rows = await engine
    .query<{ column_name: string; column_type: string }>(
      `describe select * from read_json(${sqlList(paths)}, union_by_name = true, sample_size = -1, ${readOptions(paths.length)})`,
    )
    .catch(async (err) => {
      throw await misfit(err, inputs);
    });
  const columns = rows.map((r) => ({ name: r.column_name, node: parquetExact(parseType(r.column_type)) }));
  for (const c of columns) {
    const temporal = temporalIn(c.node);
    if (temporal)
      throw new JobError(`column ${c.name} was read as ${temporal}; its text would not be kept as written`, {
        retryable: false,
      });
  }
  return columns.map((c) => ({ name: c.name, type: formatType(c.node) }));
}

/** A `DOUBLE` leaf of a column's type, and its values as a SQL list of their JSON spellings. */
interface Leaf {
  node: TypeNode & { kind: "scalar" };
  /** The leaf's value, or (`many`: under a list) a list of them. */
  values: string;
  many: boolean;
}

/**
 * The column's DOUBLE leaves, each with an expression listing its values (`expr` is the column read
 * with every DOUBLE as VARCHAR, which DuckDB's reader fills with the number as written).
 */
function doubleLeaves(node: TypeNode, expr: string, many: boolean): Leaf[] {
  switch (node.kind) {
    case "scalar":
      return isDouble(node.name) ? [{ node, values: expr, many }] : [];
    case "list":
      return doubleLeaves(node.of, many ? `flatten(${expr})` : expr, true);
    case "struct":
      return node.fields.flatMap(([name, field]) => {
        const key = sqlString(name);
        return doubleLeaves(
          field,
          many ? `list_transform(${expr}, x -> x[${key}])` : `${expr}[${key}]`,
          many,
        );
      });
    case "map":
      // A map's values are keyed by data, not by the schema: a DOUBLE among them is kept as JSON.
      if (node.value.kind === "scalar" && node.value.name === "DOUBLE")
        node.value = { kind: "scalar", name: "JSON" };
      return [];
  }
}

const isDouble = (name: string) => name === "DOUBLE" || name === "FLOAT";

/** The type with every DOUBLE leaf read as VARCHAR: the number's text as written. */
const asWritten = (node: TypeNode) => mapScalars(node, (name) => (isDouble(name) ? "VARCHAR" : name));

/** HUGEINT (inferred for integers beyond BIGINT's range, up to 20 digits) as a type Parquet holds exactly. */
const parquetExact = (node: TypeNode) =>
  mapScalars(node, (name) => (name === "HUGEINT" || name === "UHUGEINT" ? EXACT_INTEGER : name));

function temporalIn(node: TypeNode): string | undefined {
  switch (node.kind) {
    case "scalar":
      return TEMPORAL.test(node.name) ? node.name : undefined;
    case "list":
      return temporalIn(node.of);
    case "struct":
      return node.fields.map(([, f]) => temporalIn(f)).find(Boolean);
    case "map":
      return temporalIn(node.key) ?? temporalIn(node.value);
  }
}

/**
 * How to load the inputs so that DOUBLE leaves can be proven exact in the same pass: `spec` reads
 * them as the text written (a `read_json` columns struct), `select` casts them to their types, and
 * `check` (absent without DOUBLE leaves) is one aggregate row naming, per leaf (`hit_<i>`), whether
 * it holds an integer a double does not hold exactly (at least 16 digits: 2^53 has 16).
 */
export interface ExactRead {
  spec: string;
  select: string;
  check?: string;
}

export function exactRead(columns: readonly TableColumn[]): ExactRead {
  const nodes = columns.map((c) => ({ name: c.name, node: parseType(c.type) }));
  const leaves = nodes.flatMap((c) => doubleLeaves(c.node, sqlIdent(c.name), false));
  return {
    spec: nodes.map((c) => `${sqlString(c.name)}: ${sqlString(formatType(asWritten(c.node)))}`).join(", "),
    select: columns
      .map((c, i) =>
        formatType(asWritten(nodes[i]?.node as TypeNode)) === c.type
          ? sqlIdent(c.name)
          : `cast(${sqlIdent(c.name)} as ${c.type}) as ${sqlIdent(c.name)}`,
      )
      .join(", "),
    ...(leaves.length > 0 ? { check: leafHits(leaves, inexactInteger) } : {}),
  };
}

/**
 * The schema with the DOUBLE leaves `hits` names retyped: `DECIMAL(38,0)` where every value is an
 * integer that fits it, else `JSON` (one more pass over the inputs; rare).
 */
export async function retypeInexact(
  engine: Engine,
  inputs: readonly LocalInput[],
  columns: readonly TableColumn[],
  hits: readonly boolean[],
): Promise<TableColumn[]> {
  const nodes = columns.map((c) => ({ name: c.name, node: parseType(c.type) }));
  const leaves = nodes.flatMap((c) => doubleLeaves(c.node, sqlIdent(c.name), false));
  const retyped = leaves.filter((_, i) => hits[i]);
  const paths = inputs.map((i) => i.path);
  const spec = nodes
    .map((c) => `${sqlString(c.name)}: ${sqlString(formatType(asWritten(c.node)))}`)
    .join(", ");
  const [row] = await engine.query<Record<string, boolean>>(
    `select ${leafHits(retyped, notDecimal)} from read_json(${sqlList(paths)}, columns = {${spec}}, ${readOptions(paths.length)})`,
  );
  retyped.forEach((leaf, i) => {
    leaf.node.name = row?.[`hit_${i}`] ? "JSON" : EXACT_INTEGER;
  });
  return nodes.map((c) => ({ name: c.name, type: formatType(c.node) }));
}

const integer = (v: string) => `regexp_full_match(${v}, '-?[0-9]+')`;
/** SQL: whether the text `v` is an integer a double does not hold exactly (at least 16 digits: 2^53 has 16). */
export const inexactInteger = (v: string) =>
  `(strlen(${v}) >= 16 and ${integer(v)} and coalesce(try_cast(${v} as HUGEINT) <> try_cast(try_cast(${v} as DOUBLE) as HUGEINT), true))`;
const notDecimal = (v: string) => `(not ${integer(v)} or try_cast(${v} as ${EXACT_INTEGER}) is null)`;

/** Aggregates `hit_<i>`: whether any value of leaf i passes `test`. */
function leafHits(leaves: readonly Leaf[], test: (v: string) => string): string {
  return leaves
    .map((leaf, i) => {
      const hit = leaf.many
        ? `list_bool_or(list_transform(${leaf.values}, v -> coalesce(${test("v")}, false)))`
        : test(leaf.values);
      return `coalesce(bool_or(${hit}), false) as hit_${i}`;
    })
    .join(", ");
}
