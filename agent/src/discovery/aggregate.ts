/**
 * One bin's aggregates: the objects of one inventory data file (a local Parquet file) that lie
 * under the location, grouped into prefixes (`prefix.ts`), in one DuckDB query.
 *
 * - Per prefix: objects, bytes, data files (`DATA_FILE_PATTERN`, case-insensitive, less
 *   Lakesmith's own objects: `BOOKKEEPING_PATTERN`, a conversion's manifest) and their bytes,
 *   oldest and newest modification time (epoch ms).
 * - Only current objects: a report with versions lists old versions (`is_latest` false) and delete
 *   markers, which are left out; a report without those columns lists current objects only.
 * - Rows come back in DuckDB's chunks, ordered by prefix, so neither the bin nor its result is ever
 *   whole in JavaScript; DuckDB's own memory is capped by the engine's limit and spills.
 */
import { DATA_FILE_PATTERN, type DiscoveryRow } from "@lakesmith/shared/discovery";
import { BOOKKEEPING_PATTERN } from "@lakesmith/shared/prefix-conversion";
import { type Engine, sqlString } from "../engine/duckdb.ts";
import { JobError } from "../registry.ts";
import { prefixExpr } from "./prefix.ts";

/** Where the location's objects are in the report: their bucket and the keys' common start. */
export interface ReportSource {
  bucket: string;
  /** `""` or a folder ending with `/`. */
  keyPrefix: string;
}

/** The temporary table of claimed relative keys, created once per engine (`claim`). */
const CLAIMED = "discovery_claimed";

/** Loads the claimed relative keys; returns whether there are any. */
export async function claim(engine: Engine, keys: readonly string[]): Promise<boolean> {
  await engine.run(`create or replace temp table ${CLAIMED} (k varchar)`);
  if (keys.length === 0) return false;
  await engine.run(`insert into ${CLAIMED} select unnest(${keysLiteral(keys)}::varchar[])`);
  return true;
}

/** The bin's per-prefix aggregates, a chunk at a time, ordered by prefix. */
export async function* aggregateBin(
  engine: Engine,
  file: string,
  source: ReportSource,
  claimed: boolean,
): AsyncIterable<DiscoveryRow[]> {
  const read = `read_parquet(${sqlString(file)})`;
  const columns = new Set(
    (
      await engine.query<{ column_name: string }>(`select column_name from (describe select * from ${read})`)
    ).map((c) => c.column_name),
  );
  for (const needed of ["bucket", "key"])
    if (!columns.has(needed))
      throw new JobError(`the inventory data file ${file} has no '${needed}' column`, { retryable: false });
  const current = [
    columns.has("is_latest") ? "coalesce(is_latest, true)" : "true",
    columns.has("is_delete_marker") ? "not coalesce(is_delete_marker, false)" : "true",
  ].join(" and ");
  const size = columns.has("size") ? "coalesce(size, 0)" : "0";
  const modified = columns.has("last_modified_date")
    ? "epoch_ms(last_modified_date::timestamp)"
    : "null::bigint";
  const sql = `
    with objects as (
      select substr(key, ${source.keyPrefix.length + 1}) as rel, ${size}::bigint as size, ${modified} as ms
      from ${read}
      where bucket = ${sqlString(source.bucket)} and starts_with(key, ${sqlString(source.keyPrefix)}) and ${current}
    ), grouped as (
      select ${prefixExpr("rel", claimed ? CLAIMED : undefined)} as prefix, size, ms,
        regexp_matches(rel, ${sqlString(DATA_FILE_PATTERN)}, 'i')
          and not regexp_matches(rel, ${sqlString(BOOKKEEPING_PATTERN)}) as data
      from objects
    )
    select prefix, count(*)::bigint as files, sum(size)::bigint as bytes,
      count(*) filter (where data)::bigint as data_files,
      coalesce(sum(size) filter (where data), 0)::bigint as data_bytes,
      min(ms)::bigint as oldest_ms, max(ms)::bigint as newest_ms
    from grouped group by prefix order by prefix`;
  for await (const chunk of engine.queryChunks<Record<string, string | number | null>>(sql))
    yield chunk.map((r) => ({
      prefix: String(r.prefix),
      files: Number(r.files),
      bytes: Number(r.bytes),
      data_files: Number(r.data_files),
      data_bytes: Number(r.data_bytes),
      oldest_ms: r.oldest_ms === null ? null : Number(r.oldest_ms),
      newest_ms: r.newest_ms === null ? null : Number(r.newest_ms),
    }));
}

/** Objects listed in the bin (the whole bucket's share), from the Parquet footer. */
export async function scannedIn(engine: Engine, file: string): Promise<number> {
  const [row] = await engine.query<{ n: string | number }>(
    `select count(*) as n from read_parquet(${sqlString(file)})`,
  );
  return Number(row?.n ?? 0);
}

function keysLiteral(keys: readonly string[]): string {
  return `[${keys.map(sqlString).join(", ")}]`;
}
