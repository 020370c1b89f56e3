/**
 * The sampled conversion: one streamed `COPY` with the schema DuckDB infers from a sample, then a
 * proof over every record that the sample's schema cast nothing. Taken first; where the proof
 * fails the conversion takes the every-record path (`convert.ts`), so the result is always the
 * lossless schema, and the sample only decides how fast it is found.
 *
 * 1. Sample: `describe` of the inputs as `read_json` infers them from its sample (the first
 *    `SAMPLE_FILES` files), temporal detection off (`schema.ts`). A schema with a type outside
 *    `SAMPLED_TYPES` (a HUGEINT, which Parquet would hold as a double; a map; JSON) goes straight
 *    to the every-record path.
 * 2. Write: `COPY (select * from read_json(...))` to zstd Parquet of about the target file size,
 *    DuckDB inferring the same schema from the same sample. Inferred (not given) columns make the
 *    reader fail on a key the sample did not have, at any depth, and on an object or list where the
 *    sample had another kind; any failure here means "not the sample's schema". A tap in the copy's
 *    own scan (`Engine.sumTap`, `where tap(hash(c1, ..., cn))`) sums the row hash of every record
 *    as the copy parsed it: the inputs' value checksum, with no second read for it.
 * 3. Prove the inputs, one scan: every record read with every leaf as `JSON` (each value as
 *    parsed): the row count, each column's non-null values, and whether any value is of another
 *    JSON kind than its column's type (`kinds.ts`: the typed read converts a value of its column's
 *    kind exactly and one of another kind silently). A value of another kind means the sample's
 *    schema cast it: not the lossless schema, so the every-record path converts instead, and the
 *    written files are not read back. No value of another kind means the copy cast nothing, so
 *    the values it hashed are the inputs' parsed values.
 * 4. Prove the outputs, one scan: the written files' usual checksum (`engine/checksum.ts`: rows,
 *    each column's non-null values, the row hash the manifest records: the same `hash` of the same
 *    columns, as the same types, as the tap's) against the inputs': rows and counts from step 3,
 *    the row hash from the tap. Any difference (rows or values lost, a value changed on its way
 *    into the files or back) fails the run, as on the every-record path.
 *
 * Measured on the bench's JSON (docs/benchmarks.md): the tap costs about 0.25 CPU-s per 256 MB;
 * spelling every value as JSON text on both sides and comparing hashes (the check before the kinds)
 * cost 0.5 CPU-s more per 256 MB, all of it in `to_json` of the written values.
 */
import {
  type Checksum,
  checksumFromRows,
  checksumOf,
  compareChecksums,
  readAsColumns,
  type TableColumn,
} from "../engine/checksum.ts";
import { type Engine, sqlIdent, sqlList, sqlString } from "../engine/duckdb.ts";
import { formatType, mapScalars, parseType, type TypeNode } from "../engine/type-spelling.ts";
import { JobError } from "../registry.ts";
import { checkable, misfitIn } from "./kinds.ts";
import type { LocalInput } from "./misfit.ts";
import { writeParquet } from "./parquet-files.ts";
import { readOptions } from "./schema.ts";

/**
 * Files `read_json` samples. DuckDB's sample reads on past its 20,480 records once no text column
 * could still be a date: 1.0 CPU-s for 16 files of 64 MB, 0.06 s for one (1.5.6).
 */
const SAMPLE_FILES = 1;
/**
 * Leaf types whose Parquet round trip is exact and whose JSON kind `kinds.ts` checks. Not
 * `JSON`: the sample infers it for a field that is null (or an empty list) throughout the sample,
 * which every record may type (and for a field of mixed kinds, which the every-record path infers
 * too), so the sampled path never writes a schema the every-record path would not.
 */
const SAMPLED_TYPES = new Set(["BIGINT", "UBIGINT", "DOUBLE", "VARCHAR", "BOOLEAN"]);

export interface SampledWrite {
  columns: TableColumn[];
  checksum: Checksum;
  files: string[];
}

type StepTimer = <T>(step: string, work: () => Promise<T>) => Promise<T>;

/**
 * Converts the inputs with their sample's schema into `dir`, proven lossless; undefined where the
 * sample's schema does not hold every record exactly (the caller removes `dir` and infers from
 * every record).
 */
export async function convertSampled(
  engine: Engine,
  inputs: readonly LocalInput[],
  dir: string,
  targetFileSizeMb: number,
  timed: StepTimer,
  afterWrite?: (files: string[]) => Promise<void>,
): Promise<SampledWrite | undefined> {
  const paths = sqlList(inputs.map((i) => i.path));
  const options = readOptions(inputs.length, SAMPLE_FILES);
  const columns = await timed("infer", () => sampleColumns(engine, paths, options));
  if (!columns) return undefined;
  const tap = await engine.sumTap();
  const rowHash = `hash(${columns.map((c) => sqlIdent(c.name)).join(", ")})`;
  const files = await timed("write", () =>
    writeParquet(
      engine,
      `select * from read_json(${paths}, ${options}) where ${tap.call(rowHash)}`,
      dir,
      targetFileSizeMb,
    ).catch(() => undefined),
  );
  if (!files) return undefined;
  await afterWrite?.(files);
  const nodes = columns.map((c) => parseType(c.type));
  const asRead = columns.map((c, i) => `${sqlString(c.name)}: ${sqlString(asJson(nodes[i] as TypeNode))}`);
  const input = await timed("prove_inputs", () =>
    inputKinds(
      engine,
      `select * from read_json(${paths}, columns = {${asRead.join(", ")}}, ${readOptions(inputs.length)})`,
      columns,
      nodes,
    ).catch(() => undefined),
  );
  if (!input || input.misfit) return undefined;
  const output = await timed("prove_outputs", async () =>
    checksumOf(engine, await readAsColumns(engine, files, columns), columns),
  );
  // Kinds held, so the copy cast nothing: the row hash it summed is that of the inputs' parsed values.
  const problems = compareChecksums({ ...input, rowHash: tap.sum.toString() }, output);
  if (problems.length > 0)
    throw new JobError(
      `the Parquet written does not hold the inputs' rows (${problems.join("; ")}); nothing was uploaded`,
      { retryable: false },
    );
  return { columns, checksum: output, files };
}

/** The sample's schema, or undefined where it has a type the sampled path does not take. */
async function sampleColumns(engine: Engine, paths: string, options: string) {
  const rows = await engine
    .query<{ column_name: string; column_type: string }>(
      `describe select * from read_json(${paths}, ${options})`,
    )
    .catch(() => undefined);
  if (!rows) return undefined;
  try {
    const columns = rows.map((r) => ({ name: r.column_name, node: parseType(r.column_type) }));
    if (!columns.every((c) => checkable(c.node) && leaves(c.node).every((t) => SAMPLED_TYPES.has(t))))
      return undefined;
    return columns.map((c) => ({ name: c.name, type: formatType(c.node) }));
  } catch {
    return undefined; // a type the parser does not know (a union, a fixed-size array)
  }
}

/**
 * One scan of `select` (the inputs, every leaf read as `JSON`; exactly `columns`): its rows, each
 * column's non-null values and whether any value is of another JSON kind than its type (`misfit`).
 */
async function inputKinds(
  engine: Engine,
  select: string,
  columns: readonly TableColumn[],
  nodes: readonly TypeNode[],
): Promise<Checksum & { misfit: boolean }> {
  const counts = columns.map((c, i) => `count(${sqlIdent(c.name)}) as ck_count_${i}`);
  const misfits = columns.map((c, i) => misfitIn(sqlIdent(c.name), nodes[i] as TypeNode));
  const rows = await engine.query(
    `select count(*) as ck_rows, ${counts.join(", ")}, coalesce(bool_or(${misfits.join(" or ")}), false) as ck_misfit from (${select})`,
  );
  return { ...checksumFromRows(columns, rows), misfit: rows[0]?.ck_misfit === true };
}

/** The type with every leaf read as `JSON`: the value as DuckDB parsed it, whatever its kind. */
const asJson = (node: TypeNode) => formatType(mapScalars(node, () => "JSON"));

function leaves(node: TypeNode): string[] {
  switch (node.kind) {
    case "scalar":
      return [node.name];
    case "list":
      return leaves(node.of);
    case "struct":
      return node.fields.flatMap(([, f]) => leaves(f));
    case "map":
      return [...leaves(node.key), ...leaves(node.value)];
  }
}
