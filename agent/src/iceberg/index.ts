/**
 * Iceberg tables, read-only: find and parse the current metadata, read a snapshot's manifest list
 * and manifests into live data and delete files with typed partition values and bounds, map the
 * schema to DuckDB, apply partition transforms, and decide whether the agent may rewrite a table.
 * Manifests are Avro (`avsc`); nothing here talks to DuckDB.
 *
 * @example
 * const store = new FileStore("/data/lake/events");
 * const table = await loadIcebergTable(store);
 * const { entries } = await readSnapshotFiles(store, table);
 * const reasons = icebergRefusals(table, entries, store.uri); // [] when the agent may rewrite it
 * const files = entries.filter((e) => e.content === "data").map((e) => e.key);
 * const columns = duckdbColumns(currentSchema(table)); // [{ name: "id", type: "BIGINT" }, ...]
 */
export {
  AvroFields,
  type AvroFile,
  type AvroSchema,
  decodeAvroFile,
  encodeAvroFile,
  readAvroFile,
} from "./avro.ts";
export {
  civilFromDays,
  daysFromCivil,
  formatDate,
  formatTime,
  formatTimestamp,
  parseDate,
  parseTime,
  parseTimestamp,
} from "./calendar.ts";
export { duckdbColumns, duckdbType } from "./columns.ts";
export * from "./commit.ts";
export { IcebergError, type IcebergErrorCode } from "./errors.ts";
export * from "./expire.ts";
export { decimalString, humanValue, javaFloatString } from "./human.ts";
export { parseJson, stringifyJson } from "./json.ts";
export { findMetadataKey, METADATA_DIR, metadataFileNumber, VERSION_HINT_KEY } from "./locate.ts";
export { keyOfPath, type LocationMismatch, locationMismatch } from "./location.ts";
export * from "./manifest.ts";
export { type FieldSummary, type ManifestFile, readManifestList } from "./manifest-list.ts";
export * from "./metadata.ts";
export { murmur3 } from "./murmur3.ts";
export * from "./name-mapping.ts";
export * from "./refusals.ts";
export * from "./schema.ts";
export * from "./snapshot-files.ts";
export * from "./table.ts";
export * from "./transforms.ts";
export * from "./values.ts";
