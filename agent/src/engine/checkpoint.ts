/**
 * Delta checkpoint Parquet through DuckDB: the only place the Delta module touches the engine.
 *
 * Reading turns every checkpoint row into the action's log JSON (`{"add": {...}}`) with DuckDB's
 * `to_json`, so checkpoints and JSON commits share one parser: maps come out as JSON objects, as
 * in a commit, and struct-only statistics (`stats_parsed`) as nested objects. Checkpoints differ
 * in which action columns they have (older ones lack `domainMetadata`, V2 ones add `sidecar`), so
 * the columns are looked up first.
 *
 * Writing reads newline-delimited action JSON with an explicit column type per action (the classic
 * checkpoint schema, PROTOCOL.md "Checkpoint Schema") and copies it to one Parquet file.
 */
import { type Engine, sqlIdent, sqlList, sqlString } from "./duckdb.ts";

const ACTION_COLUMNS = [
  "protocol",
  "metaData",
  "txn",
  "add",
  "remove",
  "domainMetadata",
  "sidecar",
  "checkpointMetadata",
] as const;

/**
 * The action rows of checkpoint Parquet files (local paths), as log JSON objects, a chunk of rows at
 * a time: a checkpoint of a large table is never held whole as JSON text.
 */
export async function* readCheckpointActions(
  engine: Engine,
  files: readonly string[],
): AsyncIterable<Record<string, unknown>[]> {
  const source = `read_parquet(${sqlList(files)}, union_by_name = true)`;
  const described = await engine.query<{ column_name: string }>(`DESCRIBE SELECT * FROM ${source}`);
  const present = new Set(described.map((c) => c.column_name));
  const columns = ACTION_COLUMNS.filter((c) => present.has(c));
  if (columns.length === 0) return;
  const select = columns.map((c) => `to_json(${sqlIdent(c)}) AS ${sqlIdent(c)}`).join(", ");
  const where = columns.map((c) => `${sqlIdent(c)} IS NOT NULL`).join(" OR ");
  for await (const rows of engine.queryChunks<Record<string, string | null>>(
    `SELECT ${select} FROM ${source} WHERE ${where}`,
  )) {
    const actions: Record<string, unknown>[] = [];
    for (const row of rows) {
      for (const column of columns) {
        const value = row[column];
        if (value !== null && value !== undefined) actions.push({ [column]: JSON.parse(value) });
      }
    }
    yield actions;
  }
}

const MAP = "MAP(VARCHAR, VARCHAR)";

/** The DuckDB type of each action column of a classic checkpoint; `statsParsed` adds `stats_parsed`. */
export function checkpointColumns(options: { statsParsed?: string } = {}): Record<string, string> {
  const dv =
    'STRUCT(storageType VARCHAR, pathOrInlineDv VARCHAR, "offset" INTEGER, sizeInBytes INTEGER, cardinality BIGINT, maxRowIndex BIGINT)';
  const statsParsed = options.statsParsed ? `, stats_parsed ${options.statsParsed}` : "";
  return {
    protocol:
      "STRUCT(minReaderVersion INTEGER, minWriterVersion INTEGER, readerFeatures VARCHAR[], writerFeatures VARCHAR[])",
    metaData: `STRUCT(id VARCHAR, "name" VARCHAR, description VARCHAR, format STRUCT(provider VARCHAR, "options" ${MAP}), schemaString VARCHAR, partitionColumns VARCHAR[], createdTime BIGINT, "configuration" ${MAP})`,
    txn: 'STRUCT(appId VARCHAR, "version" BIGINT, lastUpdated BIGINT)',
    add: `STRUCT(path VARCHAR, partitionValues ${MAP}, size BIGINT, modificationTime BIGINT, dataChange BOOLEAN, stats VARCHAR, tags ${MAP}, deletionVector ${dv}, baseRowId BIGINT, defaultRowCommitVersion BIGINT, clusteringProvider VARCHAR${statsParsed})`,
    remove: `STRUCT(path VARCHAR, deletionTimestamp BIGINT, dataChange BOOLEAN, extendedFileMetadata BOOLEAN, partitionValues ${MAP}, size BIGINT, deletionVector ${dv}, baseRowId BIGINT, defaultRowCommitVersion BIGINT)`,
    domainMetadata: 'STRUCT(domain VARCHAR, "configuration" VARCHAR, removed BOOLEAN)',
  };
}

/**
 * Writes a checkpoint Parquet file from newline-delimited action JSON (one action a line, keyed by
 * its column name), with `columns` as the schema. Returns the number of actions written.
 */
export async function writeCheckpointParquet(
  engine: Engine,
  options: { actionsFile: string; outPath: string; columns: Record<string, string> },
): Promise<number> {
  const columns = Object.entries(options.columns)
    .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
    .join(", ");
  const [row] = await engine.query<{ Count: string }>(
    `COPY (SELECT * FROM read_json(${sqlString(options.actionsFile)}, format = 'newline_delimited', columns = {${columns}}))
     TO ${sqlString(options.outPath)} (FORMAT parquet, COMPRESSION snappy)`,
  );
  return Number(row?.Count ?? 0);
}
