/**
 * Whether a file's rows are in the order of the cluster columns, checked row by row: each row is
 * compared with the one before it in the file (`file_row_number`), lexicographically over the
 * columns, NULLs last (as the crunch's `ORDER BY` writes them). A file is sorted when no row is
 * smaller than its predecessor. One scan of the file; columns the file does not hold (partition
 * columns live in paths) are left out of the comparison. The files checked are the scan's crunch
 * sample, or, where a crunch would rewrite nothing, a sample of the live files drawn the same way.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { type Engine, sqlIdent, sqlString } from "../engine/index.ts";
import { localPaths, type ObjectStore } from "../store/index.ts";

/** Whether the local Parquet file at `path` is sorted by `columns`; true when it holds none of them. */
export async function isSortedBy(engine: Engine, path: string, columns: readonly string[]): Promise<boolean> {
  const source = `read_parquet(${sqlString(path)}, file_row_number = true)`;
  const present = new Set(
    (await engine.query<{ column_name: string }>(`describe select * from ${source}`)).map(
      (r) => r.column_name,
    ),
  );
  const keys = columns.filter((c) => present.has(c));
  if (keys.length === 0) return true;
  const prev = (c: string) => sqlIdent(`prev_${c}`);
  const lags = keys.map((c) => `lag(${sqlIdent(c)}) over (order by file_row_number) as ${prev(c)}`);
  // `a` sorts before `b`, NULLs last; equal means not distinct.
  const before = (a: string, b: string) => `((${a} is not null and ${b} is null) or ${a} < ${b})`;
  const inversion = keys.reduceRight((rest, c, i) => {
    const here = before(sqlIdent(c), prev(c));
    return i === keys.length - 1
      ? here
      : `(${here} or (${sqlIdent(c)} is not distinct from ${prev(c)} and ${rest}))`;
  }, "false");
  const [row] = await engine.query<{ n: string | number }>(
    `select count(*) as n from (select ${keys.map(sqlIdent).join(", ")}, ${lags.join(", ")}, file_row_number from ${source})
     where file_row_number > 0 and ${inversion}`,
  );
  return Number(row?.n ?? 0) === 0;
}

/**
 * How many of `keys` are sorted by `columns`, each downloaded into `dir` (a local store's files are
 * read in place) and removed after its check: for a scan whose crunch sample is empty.
 */
export async function countSorted(
  engine: Engine,
  store: Pick<ObjectStore, "localFile" | "download">,
  keys: readonly string[],
  columns: readonly string[],
  dir: string,
  signal: AbortSignal,
): Promise<number> {
  let sorted = 0;
  for (const [i, key] of keys.entries()) {
    const [path] = await localPaths(store, [key], join(dir, `order-${i}`), signal);
    try {
      if (await isSortedBy(engine, path as string, columns)) sorted++;
    } finally {
      await rm(join(dir, `order-${i}`), { recursive: true, force: true });
    }
  }
  return sorted;
}
