/**
 * Small files, as document 2 counts them (under the target file size), less what no crunch can
 * change: a partition's only file under the target has nothing to merge with (a partition smaller
 * than the target is one such file once crunched), so it is reported apart (`alone`), not as small.
 * Pure.
 */
import { partitionPath } from "../crunch/partition-path.ts";
import type { TableFile } from "../formats/index.ts";

export interface SmallFiles {
  /** Files under the target size that share their partition with another such file. */
  small: TableFile[];
  /** Files under the target size that are their partition's only one. */
  alone: TableFile[];
}

export function smallFiles(
  files: readonly TableFile[],
  partitionColumns: readonly string[],
  targetBytes: number,
): SmallFiles {
  const byPartition = new Map<string, TableFile[]>();
  for (const f of files) {
    if (f.size >= targetBytes) continue;
    const key = partitionPath(f.partitionValues, partitionColumns);
    byPartition.set(key, [...(byPartition.get(key) ?? []), f]);
  }
  const found: SmallFiles = { small: [], alone: [] };
  for (const under of byPartition.values()) (under.length === 1 ? found.alone : found.small).push(...under);
  return found;
}
