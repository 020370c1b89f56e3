/**
 * A conversion's Parquet writes: a query's rows as files of about the target size under a folder,
 * named `part-<n>.parquet` and listed back in their order.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { type Engine, sqlString } from "../engine/duckdb.ts";

/**
 * Writes a query's rows as Parquet files under `dir` (`part-<n>.parquet`, in order): zstd files of
 * about the target size: the outputs (zstd) or, `intermediate`, a chunk's share (lz4: fast to write
 * and read back).
 */
export async function writeParquet(
  engine: Engine,
  query: string,
  dir: string,
  targetFileSizeMb: number,
  intermediate = false,
): Promise<string[]> {
  await engine.run(
    `copy (${query}) to ${sqlString(dir)} (format parquet, compression ${intermediate ? "lz4" : "zstd"}, file_size_bytes '${targetFileSizeMb}MB', filename_pattern 'part-{i}')`,
  );
  return (await readdir(dir))
    .filter((f) => f.endsWith(".parquet"))
    .sort(byNumber)
    .map((f) => join(dir, f));
}

function byNumber(a: string, b: string): number {
  return Number(a.replace(/\D/g, "")) - Number(b.replace(/\D/g, ""));
}
