/**
 * Generates a lake and its S3 Inventory report as AWS writes one, for discovery tests:
 *
 * - the lake: each object written with `size` bytes to the lake's store (optional: discovery reads
 *   only the report);
 * - the report, on the destination store (its bucket root): Parquet data files under
 *   `<config>/data/<uuid>.parquet` (columns `bucket`, `key`, `version_id`, `is_latest`,
 *   `is_delete_marker`, `size`, `last_modified_date` as TIMESTAMP_MILLIS, `e_tag`, `storage_class`),
 *   `<config>/<YYYY-MM-DDTHH-MMZ>/manifest.json` listing them with bucket-relative keys, and
 *   `manifest.checksum` (the manifest's MD5), written last.
 *
 * Parquet is written by DuckDB from a temporary NDJSON file, so the rows never pass through SQL text.
 */
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Engine, sqlString } from "../../src/engine/duckdb.ts";
import type { ObjectStore } from "../../src/store/index.ts";

export interface InventoryObject {
  key: string;
  size: number;
  lastModified: Date;
  /** A noncurrent version (`is_latest` false) or a delete marker, listed by versioned reports. */
  version?: "noncurrent" | "delete_marker";
}

export interface ReportOptions {
  /** The bucket the report describes (`sourceBucket`). */
  sourceBucket: string;
  /** The configuration's folder on the destination store: `<destination-prefix>/<bucket>/<config-id>`. */
  configPrefix: string;
  objects: readonly InventoryObject[];
  /** Objects per data file (a bin). */
  rowsPerFile?: number;
  /** The report's time; its folder is named after it. */
  createdAt?: Date;
  /** `missing`: no manifest.checksum (a report still being written); `wrong`: one that does not match. */
  checksum?: "ok" | "missing" | "wrong";
}

export interface WrittenReport {
  /** The report's folder key (`<config>/<timestamp>`) and its manifest's key. */
  folder: string;
  manifestKey: string;
  /** Data file keys, bucket-relative, in manifest order; bin ids are their names without `.parquet`. */
  dataKeys: string[];
  binIds: string[];
}

/** The report folder's name for a time: `2026-11-26T01-00Z`. */
export function reportStamp(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace(":", "-")}Z`;
}

/** Writes an inventory report of `objects` to `destination` (rooted at the destination bucket). */
export async function writeInventoryReport(
  destination: ObjectStore,
  options: ReportOptions,
): Promise<WrittenReport> {
  const rowsPerFile = options.rowsPerFile ?? 1000;
  const createdAt = options.createdAt ?? new Date();
  const work = await mkdtemp(join(tmpdir(), "inventory-"));
  const engine = await Engine.open({ memoryLimitMb: 256, tempDir: join(work, "duckdb") });
  const files: { key: string; size: number; MD5checksum: string }[] = [];
  try {
    for (let start = 0; start === 0 || start < options.objects.length; start += rowsPerFile) {
      const slice = options.objects.slice(start, start + rowsPerFile);
      const json = join(work, "rows.ndjson");
      await writeFile(json, slice.map((o) => JSON.stringify(rowOf(options.sourceBucket, o))).join("\n"));
      const parquet = join(work, "bin.parquet");
      await engine.run(`copy (
          select bucket::varchar as bucket, key::varchar as key, version_id::varchar as version_id,
            is_latest::boolean as is_latest, is_delete_marker::boolean as is_delete_marker,
            size::bigint as size, epoch_ms(last_modified_date::bigint)::timestamp_ms as last_modified_date,
            e_tag::varchar as e_tag, storage_class::varchar as storage_class
          from read_ndjson(${sqlString(json)}, columns = {bucket: 'varchar', key: 'varchar', version_id: 'varchar',
            is_latest: 'boolean', is_delete_marker: 'boolean', size: 'bigint', last_modified_date: 'bigint',
            e_tag: 'varchar', storage_class: 'varchar'})
        ) to ${sqlString(parquet)} (format parquet)`);
      const bytes = await readFile(parquet);
      const key = `${options.configPrefix}/data/${randomUUID()}.parquet`;
      await destination.write(key, bytes);
      files.push({ key, size: bytes.length, MD5checksum: createHash("md5").update(bytes).digest("hex") });
      if (options.objects.length === 0) break;
    }
  } finally {
    engine.close();
    await rm(work, { recursive: true, force: true });
  }
  return writeManifest(destination, options, createdAt, files);
}

/** Writes `manifest.json` and (unless told otherwise) `manifest.checksum` for data files already written. */
export async function writeManifest(
  destination: ObjectStore,
  options: Pick<ReportOptions, "sourceBucket" | "configPrefix" | "checksum">,
  createdAt: Date,
  files: { key: string; size: number; MD5checksum: string }[],
): Promise<WrittenReport> {
  const manifest = JSON.stringify({
    sourceBucket: options.sourceBucket,
    destinationBucket: "arn:aws:s3:::inventory",
    version: "2016-11-30",
    creationTimestamp: String(createdAt.getTime()),
    fileFormat: "Parquet",
    fileSchema:
      "message s3.inventory { required binary bucket (STRING); required binary key (STRING); optional binary version_id (STRING); optional boolean is_latest; optional boolean is_delete_marker; optional int64 size; optional int64 last_modified_date (TIMESTAMP(MILLIS,true)); optional binary e_tag (STRING); optional binary storage_class (STRING);}",
    files,
  });
  const folder = `${options.configPrefix}/${reportStamp(createdAt)}`;
  const manifestKey = `${folder}/manifest.json`;
  await destination.write(manifestKey, manifest);
  const md5 = createHash("md5").update(manifest).digest("hex");
  if ((options.checksum ?? "ok") !== "missing")
    await destination.write(
      `${folder}/manifest.checksum`,
      options.checksum === "wrong" ? "0".repeat(32) : md5,
    );
  return {
    folder,
    manifestKey,
    dataKeys: files.map((f) => f.key),
    binIds: files.map((f) => f.key.slice(f.key.lastIndexOf("/") + 1).replace(/\.parquet$/, "")),
  };
}

/** Writes each (current) object of the lake with `size` bytes. */
export async function writeLake(lake: ObjectStore, objects: readonly InventoryObject[]): Promise<void> {
  for (const object of objects)
    if (object.version === undefined) await lake.write(object.key, Buffer.alloc(object.size, 0x61));
}

function rowOf(bucket: string, o: InventoryObject) {
  return {
    bucket,
    key: o.key,
    version_id: o.version ? randomUUID() : null,
    is_latest: o.version !== "noncurrent",
    is_delete_marker: o.version === "delete_marker",
    size: o.version === "delete_marker" ? null : o.size,
    last_modified_date: o.lastModified.getTime(),
    e_tag: o.version === "delete_marker" ? null : createHash("md5").update(o.key).digest("hex"),
    storage_class: "STANDARD",
  };
}
