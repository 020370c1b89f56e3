/**
 * Iceberg fixtures (`shared/fixtures/iceberg`) and a way to make a writable copy of one that
 * records where it now lies. The fixtures record locations from where they were written
 * (`data/persistent/...`, `./lineitem_iceberg`, `gs://...`); `copyIcebergFixture` rewrites every
 * recorded location and path, in the metadata JSON and in the Avro manifest lists and manifests,
 * to the copy's `file://` URI, so the copy reads as a table at home in its folder.
 */
import { chmod, cp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gunzipSync, gzipSync } from "node:zlib";
import {
  AvroFields,
  type AvroSchema,
  decodeAvroFile,
  encodeAvroFile,
  keyOfPath,
  parseJson,
  stringifyJson,
} from "../../src/iceberg/index.ts";
import { DELTA_FIXTURES } from "./fixtures.ts";

/** The Iceberg tables other engines wrote (`shared/fixtures/iceberg`). */
export const ICEBERG_FIXTURES = join(DELTA_FIXTURES, "../iceberg");

/**
 * Copies the fixture table `name` (a folder under `ICEBERG_FIXTURES` holding `metadata/`) into
 * `dir` and rewrites its recorded locations to `dir`'s `file://` URI, or to `location` where the
 * copy is to be uploaded elsewhere (`s3://lake/warehouse/t`). Returns `dir`.
 *
 * @example
 * const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lineitem"));
 * const table = await loadIcebergTable(new FileStore(dir)); // table.locationMismatch === null
 */
export async function copyIcebergFixture(name: string, dir: string, at?: string): Promise<string> {
  return copyIcebergTable(join(ICEBERG_FIXTURES, name), dir, at);
}

/** `copyIcebergFixture` for any Iceberg table folder `source`. */
export async function copyIcebergTable(source: string, dir: string, at?: string): Promise<string> {
  await cp(source, dir, { recursive: true });
  await makeWritable(dir);
  const location = (at ?? pathToFileURL(dir).href).replace(/\/$/, "");
  const sourceUri = pathToFileURL(`${source}/`).href;
  const metadataDir = join(dir, "metadata");
  const names = await readdir(metadataDir);

  const recorded = new Set<string>();
  const rewrite = (path: string) => {
    for (const old of recorded) {
      const key = keyOfPath(path, old, sourceUri);
      if (key !== null) return `${location}/${key}`;
    }
    return path;
  };
  const metadataFiles = names.filter((n) => /\.metadata\.json(\.gz)?$/.test(n));
  const metadata = new Map<string, { json: Record<string, unknown>; gzipped: boolean }>();
  for (const n of metadataFiles) {
    const bytes = await readFile(join(metadataDir, n));
    const gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b;
    const json = parseJson((gzipped ? gunzipSync(bytes) : bytes).toString("utf8")) as Record<string, unknown>;
    if (typeof json.location === "string") recorded.add(json.location);
    metadata.set(n, { json, gzipped });
  }

  for (const [n, { json, gzipped }] of metadata) {
    rewriteMetadata(json, location, rewrite);
    const text = stringifyJson(json, 2);
    await replace(metadataDir, n, gzipped ? gzipSync(text) : Buffer.from(text));
  }
  for (const n of names.filter((n) => n.endsWith(".avro"))) {
    const file = decodeAvroFile(await readFile(join(metadataDir, n)), n);
    rewriteAvro(file.schema, file.records, rewrite);
    await replace(metadataDir, n, encodeAvroFile(file));
  }
  return dir;
}

function rewriteMetadata(
  json: Record<string, unknown>,
  location: string,
  rewrite: (p: string) => string,
): void {
  json.location = location;
  const each = (list: unknown, field: string) => {
    if (!Array.isArray(list)) return;
    for (const item of list as Record<string, unknown>[])
      if (typeof item[field] === "string") item[field] = rewrite(item[field] as string);
  };
  for (const s of (json.snapshots as Record<string, unknown>[] | undefined) ?? [])
    if (Array.isArray(s.manifests)) s.manifests = s.manifests.map((m: string) => rewrite(m));
  each(json.snapshots, "manifest-list");
  each(json["metadata-log"], "metadata-file");
  each(json.statistics, "statistics-path");
  each(json["partition-statistics"], "statistics-path");
}

/** Manifest lists hold `manifest_path` (500); manifests hold `data_file` (2) with `file_path` (100). */
function rewriteAvro(schema: AvroSchema, records: Record<string, unknown>[], rewrite: (p: string) => string) {
  const top = new AvroFields(schema);
  const file = top.child(2, "data_file");
  const ids = new Set(top.ids().map(([id]) => id));
  for (const r of records) {
    if (ids.has(500)) top.set(r, 500, "manifest_path", rewrite(String(top.get(r, 500, "manifest_path"))));
    if (ids.has(2)) {
      const df = top.get(r, 2, "data_file") as Record<string, unknown>;
      file.set(df, 100, "file_path", rewrite(String(file.get(df, 100, "file_path"))));
      const referenced = file.get(df, 143, "referenced_data_file");
      if (typeof referenced === "string") file.set(df, 143, "referenced_data_file", rewrite(referenced));
    }
  }
}

/** Writes a rewritten file and drops its Hadoop checksum, which would no longer match. */
async function replace(folder: string, name: string, bytes: Buffer): Promise<void> {
  await writeFile(join(folder, name), bytes);
  await rm(join(folder, `.${name}.crc`), { force: true });
}

/** The fixtures are read-only; their copies must not be. */
async function makeWritable(path: string): Promise<void> {
  const info = await stat(path);
  await chmod(path, info.isDirectory() ? 0o755 : 0o644);
  if (info.isDirectory()) for (const entry of await readdir(path)) await makeWritable(join(path, entry));
}
