/**
 * Classic single-file checkpoints (PROTOCOL.md "Checkpoints", V1 spec): the snapshot's protocol,
 * metadata, txns, domain metadata, active files, and the tombstones still inside
 * `delta.deletedFileRetentionDuration` (default one week), written as Parquet by DuckDB, then
 * `_last_checkpoint`. Statistics follow the table's settings: JSON (`stats`) unless
 * `delta.checkpoint.writeStatsAsJson` is false on writer version 3 or later (where the protocol
 * says it is enforced), and also as a struct (`stats_parsed`) when
 * `delta.checkpoint.writeStatsAsStruct` is true.
 *
 * A checkpoint is an optimisation: the caller treats a failure here as a warning, never as a
 * failed commit. Writing the same version twice is harmless (same content), so the Parquet is a
 * plain write, not a write-if-absent.
 */
import { randomUUID } from "node:crypto";
import { mkdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Clock, systemClock } from "@lakesmith/shared/time";
import { checkpointColumns, writeCheckpointParquet } from "../engine/checkpoint.ts";
import { type Engine, sqlIdent } from "../engine/duckdb.ts";
import type { ObjectStore } from "../store/index.ts";
import { addToJson, metadataToJson, removeToJson } from "./actions.ts";
import { checkpointKey, LAST_CHECKPOINT_KEY, readLastCheckpoint } from "./log.ts";
import { type DataType, duckdbType, type StructType } from "./schema.ts";
import type { Snapshot } from "./snapshot.ts";

export const DEFAULT_CHECKPOINT_INTERVAL = 10;
export const DEFAULT_TOMBSTONE_RETENTION_MS = 7 * 24 * 3600 * 1000;

export interface CheckpointResult {
  version: number;
  /** Actions in the checkpoint. */
  size: number;
  sizeInBytes: number;
  numOfAddFiles: number;
}

/** `delta.checkpointInterval`, or 10. */
export function checkpointInterval(snapshot: Pick<Snapshot, "metadata">): number {
  const value = Number(snapshot.metadata.configuration["delta.checkpointInterval"]);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_CHECKPOINT_INTERVAL;
}

const UNIT_MS: Record<string, number> = {
  nanosecond: 1e-6,
  microsecond: 1e-3,
  millisecond: 1,
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 604_800_000,
};

/** A Delta interval property (`interval 1 week`, `interval 36 hours 30 minutes`) in ms; undefined if unreadable. */
export function parseInterval(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const words = value.trim().toLowerCase().split(/\s+/);
  if (words[0] === "interval") words.shift();
  if (words.length === 0 || words.length % 2 !== 0) return undefined;
  let total = 0;
  for (let i = 0; i < words.length; i += 2) {
    const amount = Number(words[i]);
    const unit = UNIT_MS[(words[i + 1] as string).replace(/s$/, "")];
    if (!Number.isFinite(amount) || unit === undefined) return undefined;
    total += amount * unit;
  }
  return total;
}

/** Writes the checkpoint of `snapshot` (which must be the state at its version) and `_last_checkpoint`. */
export async function writeCheckpoint(
  store: ObjectStore,
  engine: Engine,
  snapshot: Snapshot,
  options: { scratchDir: string; clock?: Clock },
): Promise<CheckpointResult> {
  const now = (options.clock ?? systemClock).now().getTime();
  const config = snapshot.metadata.configuration;
  const retention =
    parseInterval(config["delta.deletedFileRetentionDuration"]) ?? DEFAULT_TOMBSTONE_RETENTION_MS;
  // Writers enforce writeStatsAsJson from writer version 3; below it, JSON stats (lossless) are kept.
  const statsAsJson =
    config["delta.checkpoint.writeStatsAsJson"] !== "false" || snapshot.protocol.minWriterVersion < 3;
  const statsAsStruct = config["delta.checkpoint.writeStatsAsStruct"] === "true";

  const lines: string[] = [];
  const push = (column: string, value: unknown) => lines.push(JSON.stringify({ [column]: value }));
  push("protocol", snapshot.protocol);
  push("metaData", metadataToJson(snapshot.metadata));
  for (const txn of snapshot.txns.values()) push("txn", txn);
  for (const domain of snapshot.domains.values()) push("domainMetadata", domain);
  for (const file of snapshot.files) {
    const add = addToJson({ ...file, dataChange: false });
    if (!statsAsJson) delete add.stats;
    if (statsAsStruct && file.stats) add.stats_parsed = file.stats;
    push("add", add);
  }
  for (const tombstone of snapshot.tombstones) {
    // A tombstone without a timestamp can't be aged, so it is kept for vacuum to decide.
    if (tombstone.deletionTimestamp !== null && tombstone.deletionTimestamp + retention < now) continue;
    push("remove", { ...removeToJson(tombstone), dataChange: false });
  }

  const folder = join(options.scratchDir, `checkpoint-${randomUUID()}`);
  await mkdir(folder, { recursive: true });
  try {
    const actionsFile = join(folder, "actions.json");
    const outPath = join(folder, "checkpoint.parquet");
    await writeFile(actionsFile, `${lines.join("\n")}\n`);
    const statsParsed = statsAsStruct ? statsStructType(snapshot) : undefined;
    const size = await writeCheckpointParquet(engine, {
      actionsFile,
      outPath,
      columns: checkpointColumns(statsParsed ? { statsParsed } : {}),
    });
    const sizeInBytes = (await stat(outPath)).size;
    await store.write(checkpointKey(snapshot.version), { file: outPath, move: true });
    const result = { version: snapshot.version, size, sizeInBytes, numOfAddFiles: snapshot.files.length };
    const previous = await readLastCheckpoint(store);
    if (!previous || previous.version <= snapshot.version)
      await store.write(LAST_CHECKPOINT_KEY, JSON.stringify(result));
    return result;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The `stats_parsed` struct for the table's data columns (arrays and maps carry no min/max). */
function statsStructType(snapshot: Snapshot): string {
  const partitions = new Set(snapshot.metadata.partitionColumns);
  const data: StructType = {
    kind: "struct",
    fields: snapshot.metadata.schema.fields.filter((f) => !partitions.has(f.name)),
  };
  const values = leafStruct(data, (t) => duckdbType(t));
  const counts = leafStruct(data, () => "BIGINT");
  return `STRUCT(numRecords BIGINT, minValues ${values}, maxValues ${values}, nullCount ${counts}, tightBounds BOOLEAN)`;
}

function leafStruct(struct: StructType, leaf: (type: DataType) => string): string {
  const fields = struct.fields.flatMap((f) => {
    if (f.type.kind === "array" || f.type.kind === "map" || f.type.kind === "unsupported") return [];
    const type = f.type.kind === "struct" ? leafStruct(f.type, leaf) : leaf(f.type);
    return [`${sqlIdent(f.name)} ${type}`];
  });
  return fields.length === 0 ? 'STRUCT("_" INTEGER)' : `STRUCT(${fields.join(", ")})`;
}
