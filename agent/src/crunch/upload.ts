/**
 * A validated bin's files go to the table under fresh names in their partition's folder (as the
 * table's format lays them out; a
 * `file://` table on the same file system takes them by a rename). Until the commit references
 * them they are unreferenced: a job that never commits leaves them to vacuum's orphan pass.
 */
import type { Table, TableFile } from "../formats/index.ts";
import type { ObjectStore } from "../store/index.ts";
import type { BinOutput } from "./metrics.ts";
import type { RewrittenBin } from "./rewrite.ts";

export async function uploadBin(
  store: ObjectStore,
  bin: { partition: string; files: readonly TableFile[]; rows: number },
  rewritten: Pick<RewrittenBin, "files" | "outDir">,
  table: Pick<Table, "dataFolder">,
): Promise<BinOutput> {
  const partitionValues = bin.files[0]?.partitionValues ?? {};
  const folder = table.dataFolder(partitionValues);
  const adds: BinOutput["adds"] = [];
  for (const file of rewritten.files) {
    const name = file.path.slice(rewritten.outDir.length + 1).replaceAll("/", "-");
    const key = `${folder}${name}`;
    await store.write(key, { file: file.path, move: true });
    adds.push({ key, size: file.bytes, rows: file.rows, stats: file.stats, partitionValues });
  }
  return { partition: bin.partition, removes: [...bin.files], adds, rows: bin.rows };
}
