/**
 * Whether a file's rows are in the order of the cluster columns:
 *
 * - A file Lakesmith wrote says how it was sorted in its settings tag (`sort=a,b` or
 *   `sort=zorder(a,b)`, `crunch/settings.ts` `settingsTag`): it is in order when a linear sort
 *   starts with the cluster columns, or a Z-order is over exactly them (a Z-order clusters each of
 *   its columns; rows are not in any one column's order, so reading them could not tell).
 * - Any other file is checked row by row: each row is compared with the one before it in the file
 *   (`file_row_number`), lexicographically over the columns, NULLs last (as the crunch's
 *   `ORDER BY` writes them); sorted when no row is smaller than its predecessor. One scan of the
 *   file; columns the file does not hold (partition columns live in paths) are left out.
 * - The files checked are the scan's crunch sample, or, where a crunch would rewrite nothing, a
 *   sample of the live files drawn the same way.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { WRITTEN_BY_TAG } from "../crunch/plan.ts";
import { type Engine, sqlIdent, sqlString } from "../engine/index.ts";
import type { TableFile } from "../formats/index.ts";
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
 * Whether the settings tag of a file Lakesmith wrote records an order that gives `columns`'
 * clustering; false for a file without a tag.
 *
 * @example orderedByTag({ "lakesmith.settings": "zstd;rg=1;sort=zorder(b,a);v1" }, ["a", "b"]) // true
 */
export function orderedByTag(tags: TableFile["tags"], columns: readonly string[]): boolean {
  const sort = /(?:^|;)sort=([^;]*)/.exec(tags?.[WRITTEN_BY_TAG] ?? "")?.[1];
  if (!sort || sort === "none" || columns.length === 0) return false;
  const zorder = /^zorder\((.*)\)$/.exec(sort)?.[1];
  if (zorder !== undefined) {
    const sorted = zorder.split(",");
    return sorted.length === columns.length && columns.every((c) => sorted.includes(c));
  }
  const sorted = sort.split(",");
  return columns.every((c, i) => sorted[i] === c);
}

/**
 * How many of `files` are in the order of `columns`: by their tag, else each downloaded into `dir`
 * (a local store's files are read in place) and removed after its check.
 */
export async function countSorted(
  engine: Engine,
  store: Pick<ObjectStore, "localFile" | "download">,
  files: readonly Pick<TableFile, "key" | "tags">[],
  columns: readonly string[],
  dir: string,
  signal: AbortSignal,
): Promise<number> {
  let sorted = 0;
  for (const [i, file] of files.entries()) {
    if (orderedByTag(file.tags, columns)) {
      sorted++;
      continue;
    }
    const [path] = await localPaths(store, [file.key], join(dir, `order-${i}`), signal);
    try {
      if (await isSortedBy(engine, path as string, columns)) sorted++;
    } finally {
      await rm(join(dir, `order-${i}`), { recursive: true, force: true });
    }
  }
  return sorted;
}
