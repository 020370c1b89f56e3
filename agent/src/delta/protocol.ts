/**
 * Which tables the agent may rewrite (architecture.md, "Safety rules"): a compaction commits
 * removes and adds with `dataChange: false`, and that is valid only where every feature the table
 * uses still holds after such a commit. Anything else is refused with a reason a person can act on,
 * never rewritten "best effort".
 *
 * Features come from `readerFeatures`/`writerFeatures` on reader 3 / writer 7, and are implied by
 * the legacy versions below that (PROTOCOL.md "Writer Version Requirements"): writer 2 appendOnly
 * and invariants, 3 checkConstraints, 4 changeDataFeed and generatedColumns, 5 columnMapping,
 * 6 identityColumns; reader 2 columnMapping.
 *
 * Why each allowed feature stays valid under a dataChange=false rewrite (PROTOCOL.md):
 * - appendOnly: "New log entries may rearrange data (i.e. add and remove actions where dataChange=false)".
 * - invariants, checkConstraints, generatedColumns: they constrain rows written; a rewrite writes
 *   the same rows, which the rewrite's validation proves before the commit.
 * - changeDataFeed: cdc files are owed only by operations that change data.
 * - identityColumns: no row is inserted, so no identity value is generated and the high-water mark stays.
 * - timestampNtz: a type; the rewrite maps it to DuckDB TIMESTAMP (isAdjustedToUTC=false).
 * - domainMetadata: the commit writes no domain; checkpoints carry the domains in effect.
 * - vacuumProtocolCheck: "standard commits remain unaffected".
 * - clustering: unclustered files are allowed ("a clustering implementation may cluster any files
 *   with an unset clusteringProvider"); rewritten files must keep statistics for the clustering columns.
 * - columnMapping only while `delta.columnMapping.mode` is none: otherwise physical names differ.
 */
import type { Protocol } from "./actions.ts";
import { schemaRefusal } from "./schema.ts";
import type { Snapshot } from "./snapshot.ts";

export const MAX_READER_VERSION = 3;
export const MAX_WRITER_VERSION = 7;

const SAFE_FEATURES = new Set([
  "appendOnly",
  "invariants",
  "checkConstraints",
  "changeDataFeed",
  "generatedColumns",
  "identityColumns",
  "timestampNtz",
  "domainMetadata",
  "vacuumProtocolCheck",
  "clustering",
]);

/** Features the agent knows and refuses, with why. */
const REFUSED_FEATURES: Record<string, string> = {
  deletionVectors: "deletion vectors: rows hidden by a deletion vector would come back in a rewrite",
  rowTracking: "row tracking: a rewrite would have to preserve row ids and commit versions",
  typeWidening: "type widening: files may hold older physical types than the schema",
  "typeWidening-preview": "type widening (preview): files may hold older physical types than the schema",
  variantType: "variant type: DuckDB can't rewrite variant columns losslessly",
  "variantType-preview": "variant type (preview): DuckDB can't rewrite variant columns losslessly",
  variantShredding: "variant shredding: DuckDB can't rewrite shredded variants",
  "variantShredding-preview": "variant shredding (preview): DuckDB can't rewrite shredded variants",
  icebergCompatV1:
    "Iceberg compatibility V1: it requires column mapping and Iceberg metadata the agent does not keep",
  icebergCompatV2:
    "Iceberg compatibility V2: it requires column mapping and Iceberg metadata the agent does not keep",
  v2Checkpoint: "V2 checkpoints: the agent reads and writes classic checkpoints only",
  inCommitTimestamp: "in-commit timestamps: the agent does not write them",
  catalogManaged: "catalog-managed table: commits must go through the catalog",
  allowColumnDefaults: "column defaults: not verified for rewrites",
};

const LEGACY_WRITER: [number, string[]][] = [
  [2, ["appendOnly", "invariants"]],
  [3, ["checkConstraints"]],
  [4, ["changeDataFeed", "generatedColumns"]],
  [5, ["columnMapping"]],
  [6, ["identityColumns"]],
];

/** The writer features in force: listed on writer 7, implied by the version below it. */
export function writerFeatures(protocol: Protocol): Set<string> {
  if (protocol.minWriterVersion >= 7) return new Set(protocol.writerFeatures ?? []);
  return new Set(LEGACY_WRITER.filter(([v]) => protocol.minWriterVersion >= v).flatMap(([, f]) => f));
}

/** The reader features in force: listed on reader 3, columnMapping on reader 2. */
export function readerFeatures(protocol: Protocol): Set<string> {
  if (protocol.minReaderVersion >= 3) return new Set(protocol.readerFeatures ?? []);
  return new Set(protocol.minReaderVersion === 2 ? ["columnMapping"] : []);
}

/** Every reason the agent can't rewrite this table; empty when it can. */
export function writeRefusals(snapshot: Snapshot): string[] {
  const { protocol, metadata } = snapshot;
  const config = metadata.configuration;
  const reasons: string[] = [];
  if (protocol.minReaderVersion > MAX_READER_VERSION)
    reasons.push(
      `reader version ${protocol.minReaderVersion} is newer than the agent supports (${MAX_READER_VERSION})`,
    );
  if (protocol.minWriterVersion > MAX_WRITER_VERSION)
    reasons.push(
      `writer version ${protocol.minWriterVersion} is newer than the agent supports (${MAX_WRITER_VERSION})`,
    );

  const readers = readerFeatures(protocol);
  const writers = writerFeatures(protocol);
  for (const feature of new Set([...readers, ...writers])) {
    const side = readers.has(feature) && !writers.has(feature) ? "reader" : "writer";
    if (SAFE_FEATURES.has(feature)) continue;
    if (feature === "columnMapping") {
      const mode = config["delta.columnMapping.mode"] ?? "none";
      if (mode !== "none")
        reasons.push(`column mapping (mode '${mode}'): data files use physical column names`);
      continue;
    }
    const known = REFUSED_FEATURES[feature];
    reasons.push(
      known ?? `unknown ${side} feature '${feature}': the agent can't tell whether a rewrite keeps it valid`,
    );
  }

  if (!writers.has("columnMapping") && (config["delta.columnMapping.mode"] ?? "none") !== "none")
    reasons.push(`column mapping mode '${config["delta.columnMapping.mode"]}' is set without the feature`);
  if (config["delta.enableRowTracking"] === "true" && !writers.has("rowTracking"))
    reasons.push("row tracking is enabled (delta.enableRowTracking)");
  if (config["delta.enableInCommitTimestamps"] === "true" && !writers.has("inCommitTimestamp"))
    reasons.push("in-commit timestamps are enabled (delta.enableInCommitTimestamps)");
  if (!writers.has("deletionVectors") && snapshot.files.some((f) => f.deletionVector))
    reasons.push("active files carry deletion vectors");
  if (metadata.format.provider.toLowerCase() !== "parquet")
    reasons.push(`data files are '${metadata.format.provider}', not Parquet`);
  if (metadata.schemaError) reasons.push(metadata.schemaError);
  const schema = schemaRefusal(metadata.schema);
  if (schema) reasons.push(schema);
  return reasons;
}

/** Null when the agent may rewrite the table (compaction), else every reason joined. */
export function writeRefusal(snapshot: Snapshot): string | null {
  const reasons = writeRefusals(snapshot);
  return reasons.length === 0 ? null : `the agent can't rewrite this table safely: ${reasons.join("; ")}`;
}
