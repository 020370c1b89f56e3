/**
 * Which Iceberg tables a writer must not rewrite, and why, in words a person can act on. The
 * agent's compaction replaces data files with others holding the same rows; that is only safe
 * where the files alone say which rows are live and the new files can be recorded as the old ones
 * were. Each reason below breaks one of those:
 * - a format version above 2: v3 adds row lineage and deletion vectors the agent does not keep;
 * - no current snapshot: nothing to rewrite from;
 * - live position or equality delete files: a rewrite would bring deleted rows back unless it
 *   applied them, which the agent does not;
 * - encryption (`encryption-keys`, key metadata on a manifest or file): the agent can't read or
 *   write encrypted files;
 * - data files that are not Parquet, or that lie outside the table (the store can't reach them);
 * - an unknown partition transform, or a column type the agent can't write back;
 * - a recorded location that is not the store's root: new files would be recorded elsewhere.
 */
import { duckdbType } from "./columns.ts";
import { locationMismatch } from "./location.ts";
import type { ManifestEntry } from "./manifest.ts";
import { currentSchema, currentSnapshot, type IcebergTable } from "./table.ts";
import { transformString } from "./transforms.ts";

export const MAX_FORMAT_VERSION = 2;

/**
 * Every reason a writer must not rewrite the table; empty when it may. `entries` are the current
 * snapshot's live entries (`readSnapshotFiles`), null where they could not be read.
 */
export function icebergRefusals(
  table: IcebergTable,
  entries: readonly ManifestEntry[] | null,
  storeUri: string,
): string[] {
  const { metadata } = table;
  const reasons: string[] = [];
  if (metadata.formatVersion > MAX_FORMAT_VERSION)
    reasons.push(
      `format version ${metadata.formatVersion} is newer than the agent can rewrite (${MAX_FORMAT_VERSION})`,
    );
  let hasSnapshot = false;
  try {
    hasSnapshot = currentSnapshot(table) !== null;
  } catch {
    // A current-snapshot-id naming no snapshot is as good as none.
  }
  if (!hasSnapshot) reasons.push("the table has no current snapshot, so there is nothing to rewrite");

  const live = entries ?? [];
  const positional = live.filter((e) => e.content === "position_deletes").length;
  const equality = live.filter((e) => e.content === "equality_deletes").length;
  if (positional + equality > 0)
    reasons.push(
      `the current snapshot has ${positional} position delete file(s) and ${equality} equality delete file(s); a rewrite would bring deleted rows back`,
    );

  if (metadata.encryptionKeys !== null)
    reasons.push("the table metadata lists encryption keys: the table is encrypted");
  const keyed = live.filter((e) => e.keyMetadata !== null || e.manifest.keyMetadata !== null).length;
  if (keyed > 0) reasons.push(`${keyed} live file(s) or their manifests carry encryption key metadata`);

  const formats = new Set(
    live.filter((e) => e.content === "data" && e.format.toUpperCase() !== "PARQUET").map((e) => e.format),
  );
  if (formats.size > 0) reasons.push(`data files are ${[...formats].join(", ")}, not Parquet`);
  const outside = live.filter((e) => e.key === null);
  if (outside.length > 0)
    reasons.push(
      `${outside.length} live file(s) lie outside the table location (e.g. ${outside[0]?.path}), where the agent can't reach them`,
    );

  const specs = new Set([metadata.defaultSpecId, ...live.map((e) => e.specId)]);
  for (const spec of metadata.partitionSpecs.filter((s) => specs.has(s.specId)))
    for (const field of spec.fields)
      if (field.transform.kind === "unknown")
        reasons.push(
          `partition field '${field.name}' uses the transform '${transformString(field.transform)}', which the agent does not know`,
        );
  for (const field of currentSchema(table).fields) {
    try {
      duckdbType(field.type);
    } catch (err) {
      reasons.push(`column '${field.name}': ${(err as Error).message}`);
    }
  }

  const mismatch = locationMismatch(metadata.location, storeUri);
  if (mismatch)
    reasons.push(
      `the table records its location as '${mismatch.recorded}' but is stored at '${mismatch.store}'; new files would be recorded under the wrong location`,
    );
  return reasons;
}
