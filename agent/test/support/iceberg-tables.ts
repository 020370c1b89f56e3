/**
 * Iceberg tables made to order for tests and benchmarks, written the way a writer would:
 * - `metadata/v1.metadata.json` (format v1 or v2): one schema, field ids 1..n; one partition spec,
 *   field ids from 1000, default names as the reference implementation gives them; unsorted; no
 *   snapshot; then `version-hint.text`.
 * - Rows come from DuckDB (`select <sql> as <name>, ... from range(rows) t(i)`), each cast to its
 *   column's type. Each row's partition tuple is `applyTransform` over the row's source values,
 *   streamed through JavaScript a chunk at a time, so bucket hashes are the spec's murmur3.
 * - Files: every partition gets one, the rest go one at a time to the partition with the most rows
 *   per file; a partition's rows are split into near-equal runs in row order. Each file is written
 *   by DuckDB under `data/<human partition path>/` with the schema's Parquet field ids.
 * - Metrics are read back from each written file: counts for every column, bounds where DuckDB's
 *   min and max are the Iceberg value exactly (not NaN, not for all-null columns).
 * - The files are committed with `commitReplace` in `commits` appends (file j in append j % commits),
 *   the first on a table without a snapshot.
 */
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { partitionFolder } from "../../src/crunch/partition-path.ts";
import { Engine, sqlIdent, sqlString } from "../../src/engine/duckdb.ts";
import {
  applyTransform,
  commitReplace,
  duckdbType,
  encodeValue,
  humanString,
  type IcebergValue,
  loadIcebergTable,
  type NewDataFile,
  type PrimitiveType,
  parseDecimal,
  parseTransform,
  parseType,
  readSnapshotFiles,
  resultType,
  stringifyJson,
  type Transform,
  transformString,
  typeString,
} from "../../src/iceberg/index.ts";
import { FileStore, type ObjectStore } from "../../src/store/index.ts";

export interface GeneratedColumn {
  name: string;
  /** An Iceberg type: "long", "int", "string", "date", "timestamptz", "timestamp", "decimal(10,2)", "double", "boolean", "float". */
  type: string;
  /** A DuckDB expression over `i` (the 0-based row number) giving the row's value. */
  sql: string;
}

export interface GeneratedTableOptions {
  /** The folder to create the table in (a `file://` table at home there). */
  dir: string;
  /** The location to record, by default the folder's `file://` URI (`s3://lake/warehouse/t` for a table to upload). */
  location?: string;
  /** Default 2. */
  formatVersion?: 1 | 2;
  columns: GeneratedColumn[];
  /** Transforms as the metadata names them: "identity", "bucket[4]", "truncate[3]", "year", "month", "day", "hour", "void". */
  partition: { source: string; transform: string; name?: string }[];
  rows: number;
  /** Data files to split the rows into, each holding rows of one partition only. */
  files: number;
  /** Append snapshots to commit the files in (default 1). */
  commits?: number;
  /** Parquet compression (default "snappy"). */
  compression?: string;
}

interface Column {
  id: number;
  name: string;
  type: PrimitiveType;
  sql: string;
}

interface SpecField {
  fieldId: number;
  name: string;
  source: Column;
  transform: Transform;
}

interface Partition {
  tuple: Map<number, IcebergValue | null>;
  /** `name=value/...` with the values' human strings, escaped; "" unpartitioned. */
  folder: string;
  rows: number;
  files: number;
  firstFile: number;
}

const GENERATED = new Set([
  "boolean",
  "int",
  "long",
  "float",
  "double",
  "date",
  "timestamp",
  "timestamptz",
  "string",
]);
/** Helper columns beside the generated ones: the row number and the file it goes to. */
const ROW = "__row";
const FILE = "__file";

/**
 * Writes an Iceberg table of generated rows and commits its files; returns what it holds.
 *
 * @example
 * await writeIcebergTable({
 *   dir: join(scratch, "events"),
 *   columns: [{ name: "id", type: "long", sql: "i" }, { name: "at", type: "timestamptz", sql: "TIMESTAMPTZ '2024-01-01 00:00:00+00' + to_hours(i)" }],
 *   partition: [{ source: "at", transform: "day" }],
 *   rows: 2_000,
 *   files: 12,
 * }); // { dir, rows: 2000, files: 12 }, files under data/at_day=2024-01-01/ ...
 */
export async function writeIcebergTable(
  options: GeneratedTableOptions,
): Promise<{ dir: string; rows: number; files: number }> {
  const { dir, rows, files } = options;
  const commits = options.commits ?? 1;
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`rows must be a positive integer, not ${rows}`);
  if (!Number.isInteger(commits) || commits < 1 || commits > files)
    throw new Error(`commits must be between 1 and the number of files (${files}), not ${commits}`);
  const columns = options.columns.map((c, i): Column => ({ ...c, id: i + 1, type: columnType(c) }));
  const spec = options.partition.map((p, j): SpecField => {
    const source = columns.find((c) => c.name === p.source);
    if (!source) throw new Error(`partition source '${p.source}' is not one of the columns`);
    const transform = parseTransform(p.transform);
    resultType(transform, source.type);
    return { fieldId: 1000 + j, name: p.name ?? partitionName(source.name, transform), source, transform };
  });
  const location = (options.location ?? pathToFileURL(dir).href).replace(/\/+$/, "");
  await mkdir(join(dir, "metadata"), { recursive: true });
  await writeFile(
    join(dir, "metadata/v1.metadata.json"),
    stringifyJson(initialMetadata(options.formatVersion ?? 2, location, columns, spec), 2),
  );
  await writeFile(join(dir, "metadata/version-hint.text"), "1");

  const scratch = await mkdtemp(join(tmpdir(), "iceberg-tables-"));
  const engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
  try {
    const values = columns.map((c) => `cast((${c.sql}) as ${duckdbType(c.type)}) as ${sqlIdent(c.name)}`);
    await engine.run(
      `create temp table gen as select i as ${ROW}, ${values.join(", ")} from range(${rows}) t(i)`,
    );
    const { partitions, fileOf } = await placeRows(engine, spec, rows, files);
    const placement = join(scratch, "placement.csv");
    await writeFile(placement, Array.from(fileOf, (f, r) => `${r},${f}`).join("\n"));
    await engine.run(
      `create temp table placed as select gen.*, p.f as ${FILE} from gen join read_csv(${sqlString(placement)}, header = false, columns = {'r': 'INTEGER', 'f': 'INTEGER'}) p on gen.${ROW} = p.r`,
    );
    const names = columns.map((c) => sqlIdent(c.name)).join(", ");
    const fieldIds = columns.map((c) => `${sqlString(c.name)}: ${c.id}`).join(", ");
    const compression = sqlString(options.compression ?? "snappy");
    const written: NewDataFile[] = [];
    for (const p of partitions)
      for (let f = p.firstFile; f < p.firstFile + p.files; f++) {
        const key = `data/${p.folder}part-${String(f).padStart(5, "0")}-${randomUUID()}.parquet`;
        const path = join(dir, key);
        await mkdir(dirname(path), { recursive: true });
        await engine.run(
          `copy (select ${names} from placed where ${FILE} = ${f} order by ${ROW}) to ${sqlString(path)} (format parquet, compression ${compression}, field_ids {${fieldIds}})`,
        );
        written.push(await dataFile(engine, dir, key, columns, p.tuple));
      }
    const store = new FileStore(dir);
    await appendFiles(
      location === store.uri.replace(/\/+$/, "") ? store : storeAt(store, location),
      written,
      commits,
    );
    return { dir, rows, files: written.length };
  } finally {
    engine.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The SQL that gives a column's values as `icebergValue` reads them (days, microseconds, exact text). */
export function icebergValueSql(type: PrimitiveType, expr: string): string {
  if (type.kind === "decimal") return `(${expr})::VARCHAR`;
  if (type.kind === "fixed") return expr;
  switch (type.name) {
    case "date":
      return `(${expr} - DATE '1970-01-01')::INTEGER`;
    case "long":
      return `(${expr})::VARCHAR`;
    case "timestamp":
    case "timestamptz":
      return `epoch_us(${expr})::VARCHAR`;
    default:
      return expr;
  }
}

/** A value `icebergValueSql` selected, as `values.ts` types it. */
export function icebergValue(type: PrimitiveType, raw: unknown): IcebergValue | null {
  if (raw === null || raw === undefined) return null;
  if (type.kind === "decimal") return parseDecimal(String(raw), type.scale);
  if (type.kind === "fixed") return raw as Buffer;
  switch (type.name) {
    case "long":
    case "timestamp":
    case "timestamptz":
      return BigInt(raw as string);
    case "int":
    case "date":
    case "float":
    case "double":
      return Number(raw);
    case "string":
      return String(raw);
    default:
      return raw as IcebergValue;
  }
}

function columnType(column: GeneratedColumn): PrimitiveType {
  const type = parseType(column.type);
  if (type.kind !== "decimal" && !(type.kind === "primitive" && GENERATED.has(type.name)))
    throw new Error(
      `column '${column.name}' has type '${column.type}'; generated columns are decimal(P,S) or one of ${[...GENERATED].join(", ")}`,
    );
  return type;
}

/** The reference implementation's default partition field name. */
function partitionName(source: string, transform: Transform): string {
  const suffix: Record<string, string> = {
    bucket: "bucket",
    truncate: "trunc",
    year: "year",
    month: "month",
    day: "day",
    hour: "hour",
    void: "null",
  };
  return transform.kind === "identity" ? source : `${source}_${suffix[transform.kind] ?? transform.kind}`;
}

function initialMetadata(
  formatVersion: 1 | 2,
  location: string,
  columns: Column[],
  spec: SpecField[],
): Record<string, unknown> {
  const schema = {
    type: "struct",
    "schema-id": 0,
    fields: columns.map((c) => ({ id: c.id, name: c.name, required: false, type: typeString(c.type) })),
  };
  const fields = spec.map((f) => ({
    name: f.name,
    transform: transformString(f.transform),
    "source-id": f.source.id,
    "field-id": f.fieldId,
  }));
  const common = {
    "format-version": formatVersion,
    "table-uuid": randomUUID(),
    location,
    "last-updated-ms": Date.now(),
    "last-column-id": columns.length,
    "current-schema-id": 0,
    schemas: [schema],
    "default-spec-id": 0,
    "partition-specs": [{ "spec-id": 0, fields }],
    "last-partition-id": 999 + spec.length,
    "default-sort-order-id": 0,
    "sort-orders": [{ "order-id": 0, fields: [] }],
    properties: {},
    "current-snapshot-id": -1,
    snapshots: [],
    "snapshot-log": [],
    "metadata-log": [],
  };
  return formatVersion === 1
    ? { ...common, schema, "partition-spec": fields }
    : { ...common, "last-sequence-number": 0, refs: {} };
}

/**
 * Each row's file: its partition from the transforms, then the partition's files in row order.
 * Throws where the rows fall into more partitions than there are files, or are fewer than them.
 */
async function placeRows(
  engine: Engine,
  spec: SpecField[],
  rows: number,
  files: number,
): Promise<{ partitions: Partition[]; fileOf: Int32Array }> {
  const partitionOf = new Int32Array(rows);
  const partitions: Partition[] = [];
  const byKey = new Map<string, number>();
  const sources = spec.map((f, j) => `, ${icebergValueSql(f.source.type, sqlIdent(f.source.name))} as p${j}`);
  for await (const chunk of engine.queryChunks<Record<string, unknown>>(
    `select ${ROW}::INTEGER as r${sources.join("")} from gen`,
  ))
    for (const row of chunk) {
      const values = spec.map((f, j) =>
        applyTransform(f.transform, f.source.type, icebergValue(f.source.type, row[`p${j}`])),
      );
      const key = stringifyJson(values.map((v) => (Buffer.isBuffer(v) ? v.toString("hex") : v)));
      let index = byKey.get(key);
      if (index === undefined) {
        index = partitions.length;
        byKey.set(key, index);
        const human = Object.fromEntries(
          spec.map((f, j) => [f.name, humanString(f.transform, f.source.type, values[j] ?? null)]),
        );
        partitions.push({
          tuple: new Map(spec.map((f, j) => [f.fieldId, values[j] ?? null])),
          folder: partitionFolder(
            human,
            spec.map((f) => f.name),
          ),
          rows: 0,
          files: 0,
          firstFile: 0,
        });
      }
      (partitions[index] as Partition).rows++;
      partitionOf[row.r as number] = index;
    }
  if (files < partitions.length || files > rows)
    throw new Error(
      `the ${rows} rows fall into ${partitions.length} partitions, so they fit in ${partitions.length} to ${rows} files, not ${files}; change the column's values or the file count`,
    );
  for (const p of partitions) p.files = 1;
  for (let extra = files - partitions.length; extra > 0; extra--) {
    let best: Partition | undefined;
    for (const p of partitions)
      if (p.files < p.rows && (!best || p.rows / p.files > best.rows / best.files)) best = p;
    (best as Partition).files++;
  }
  let next = 0;
  for (const p of partitions) {
    p.firstFile = next;
    next += p.files;
  }
  const seen = new Int32Array(partitions.length);
  const fileOf = partitionOf.map((index) => {
    const p = partitions[index] as Partition;
    const rank = seen[index] ?? 0;
    seen[index] = rank + 1;
    return p.firstFile + Math.floor((rank * p.files) / p.rows);
  });
  return { partitions, fileOf };
}

/** The written file's metrics as DuckDB reads them back. */
async function dataFile(
  engine: Engine,
  dir: string,
  key: string,
  columns: Column[],
  partition: Map<number, IcebergValue | null>,
): Promise<NewDataFile> {
  const path = join(dir, key);
  const exprs = columns.flatMap((c) => {
    const col = sqlIdent(c.name);
    const nan = c.type.kind === "primitive" && (c.type.name === "double" || c.type.name === "float");
    const of = (fn: string) =>
      icebergValueSql(c.type, `${fn}(${col})${nan ? ` filter (where not isnan(${col}))` : ""}`);
    return [`count(${col})::VARCHAR as c${c.id}`, `${of("min")} as lo${c.id}`, `${of("max")} as hi${c.id}`];
  });
  const [row = {}] = await engine.query<Record<string, unknown>>(
    `select count(*)::VARCHAR as n, ${exprs.join(", ")} from read_parquet(${sqlString(path)})`,
  );
  const n = BigInt(row.n as string);
  const file: NewDataFile = {
    key,
    fileSizeInBytes: (await stat(path)).size,
    recordCount: Number(n),
    specId: 0,
    partition,
    valueCounts: new Map(columns.map((c) => [c.id, n])),
    nullValueCounts: new Map(columns.map((c) => [c.id, n - BigInt(row[`c${c.id}`] as string)])),
    lowerBounds: new Map(),
    upperBounds: new Map(),
  };
  for (const c of columns) {
    const lo = icebergValue(c.type, row[`lo${c.id}`]);
    const hi = icebergValue(c.type, row[`hi${c.id}`]);
    if (lo === null || hi === null) continue;
    file.lowerBounds.set(c.id, encodeValue(c.type, lo));
    file.upperBounds.set(c.id, encodeValue(c.type, hi));
  }
  return file;
}

async function appendFiles(store: ObjectStore, files: NewDataFile[], commits: number): Promise<void> {
  for (let c = 0; c < commits; c++) {
    const table = await loadIcebergTable(store);
    const base = table.metadata.currentSnapshotId === null ? null : await readSnapshotFiles(store, table);
    const added = files.filter((_, j) => j % commits === c);
    const outcome = await commitReplace(store, table, {
      base,
      removed: [],
      added,
      summary: {},
      nowMs: Date.now(),
    });
    if (!outcome.committed)
      throw new Error(
        `another writer committed to ${store.uri} (${outcome.reason}) while the table was generated`,
      );
  }
}

/** `store` as if rooted at `location`, so a table recording where it will be uploaded can commit here. */
function storeAt(store: ObjectStore, location: string): ObjectStore {
  const uri = `${location}/`;
  return {
    uri,
    uriOf: (key) => `${uri}${key}`,
    list: (prefix) => store.list(prefix),
    head: (key) => store.head(key),
    read: (key, range) => store.read(key, range),
    download: (key, localPath) => store.download(key, localPath),
    write: (key, source) => store.write(key, source),
    writeIfAbsent: (key, source) => store.writeIfAbsent(key, source),
    deleteMany: (keys) => store.deleteMany(keys),
  };
}
