/**
 * A Delta table's current rows as checksums, per partition, read through the agent's own Delta
 * reader and checksum from a local folder: what end-to-end tests compare before and after a job
 * that must keep rows intact (a rewrite) or drop exactly some partitions (an expiration).
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { loadSnapshot } from "../../agent/src/delta/index.ts";
import { duckdbColumns } from "../../agent/src/delta/schema.ts";
import { checksumFiles, Engine } from "../../agent/src/engine/index.ts";
import { storeFor } from "../../agent/src/store/index.ts";

export interface DeltaRows {
  /** The snapshot's version. */
  version: number;
  files: number;
  /** Checksum per partition, keyed by its partition values as JSON, sorted. */
  partitions: Record<string, unknown>;
}

/** The table at `folder` as its latest snapshot holds it; `scratch` gets the downloaded files. */
export async function deltaRows(folder: string, scratch: string): Promise<DeltaRows> {
  const engine = await Engine.open();
  try {
    const store = storeFor(`file://${folder}`);
    const dir = mkdtempSync(join(scratch, "rows-"));
    const snapshot = await loadSnapshot(store, engine, { scratchDir: dir });
    const columns = duckdbColumns(snapshot.metadata.schema, snapshot.metadata.partitionColumns);
    const byPartition = new Map<string, string[]>();
    for (const [i, f] of snapshot.files.entries()) {
      const local = join(dir, `${i}.parquet`);
      await store.download(f.path, local);
      const key = JSON.stringify(f.partitionValues);
      byPartition.set(key, [...(byPartition.get(key) ?? []), local]);
    }
    const partitions: Record<string, unknown> = {};
    for (const [key, files] of [...byPartition].sort(([a], [b]) => a.localeCompare(b)))
      partitions[key] = await checksumFiles(engine, files, columns);
    return { version: snapshot.version, files: snapshot.files.length, partitions };
  } finally {
    engine.close();
  }
}
