import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlList } from "../src/engine/duckdb.ts";
import {
  AvroFields,
  decodeAvroFile,
  encodeAvroFile,
  icebergRefusals,
  loadIcebergTable,
  type ManifestEntry,
  parseJson,
  readSnapshotFiles,
  stringifyJson,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import { copyIcebergFixture, ICEBERG_FIXTURES } from "./support/iceberg.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-refusals-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** The refusals for a table folder, reading its current snapshot's files where it has one. */
async function refusalsAt(dir: string): Promise<{ reasons: string[]; entries: ManifestEntry[] | null }> {
  const store = new FileStore(dir);
  const table = await loadIcebergTable(store);
  const entries =
    table.metadata.currentSnapshotId === null ? null : (await readSnapshotFiles(store, table)).entries;
  return { reasons: icebergRefusals(table, entries, store.uri), entries };
}
const refusals = async (name: string) => (await refusalsAt(join(ICEBERG_FIXTURES, name))).reasons;

/** Edits the current metadata file of a copied table in place. */
async function editMetadata(dir: string, edit: (json: Record<string, unknown>) => void): Promise<void> {
  const store = new FileStore(dir);
  const { metadataKey } = await loadIcebergTable(store);
  const file = join(dir, metadataKey);
  const json = parseJson(await readFile(file, "utf8")) as Record<string, unknown>;
  edit(json);
  await writeFile(file, stringifyJson(json, 2));
}

/** Edits every data_file record of a copied table's manifests (through field ids). */
async function editDataFiles(
  dir: string,
  names: string[],
  edit: (fields: AvroFields, df: Record<string, unknown>) => void,
) {
  for (const name of names) {
    const path = join(dir, "metadata", name);
    const file = decodeAvroFile(await readFile(path), name);
    const entry = new AvroFields(file.schema);
    const fields = entry.child(2, "data_file");
    for (const r of file.records) edit(fields, entry.get(r, 2, "data_file") as Record<string, unknown>);
    await writeFile(path, encodeAvroFile(file));
  }
}

describe("icebergRefusals on the fixtures", () => {
  it("refuses lineitem_iceberg only because its recorded location is not where it lies", async () => {
    const reasons = await refusals("iceberg/lineitem_iceberg");
    const uri = pathToFileURL(join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/")).href;
    expect(reasons).toEqual([
      `the table records its location as './lineitem_iceberg' but is stored at '${uri}'; new files would be recorded under the wrong location`,
    ]);
  });

  it("refuses tables with live equality deletes (equality_deletes)", async () => {
    const reasons = await refusals("equality_deletes/warehouse/mydb/mytable");
    expect(reasons).toContain(
      "the current snapshot has 0 position delete file(s) and 4 equality delete file(s); a rewrite would bring deleted rows back",
    );
  });

  it("refuses format version 3 and its deletion vectors (legacy_bare_deletion_vector)", async () => {
    const reasons = await refusals(
      "legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector",
    );
    expect(reasons.slice(0, 2)).toEqual([
      "format version 3 is newer than the agent can rewrite (2)",
      "the current snapshot has 1 position delete file(s) and 0 equality delete file(s); a rewrite would bring deleted rows back",
    ]);
  });

  it("refuses a table without a snapshot and with a type DuckDB can't write (timestamptz_ns)", async () => {
    const reasons = await refusals("timestamptz_ns");
    expect(reasons).toContain("the table has no current snapshot, so there is nothing to rewrite");
    expect(reasons).toContain("column 'val': the type 'timestamptz_ns' has no DuckDB counterpart");
  });

  it("refuses files outside the table location (column_mapping)", async () => {
    const reasons = await refusals("column_mapping/warehouse/default.db/my_table");
    expect(reasons).toContain(
      "1 live file(s) lie outside the table location (e.g. data/persistent/column_mapping/warehouse/example/mock_data.parquet), where the agent can't reach them",
    );
  });

  it("names both locations of a table recorded on another store (big_query_error)", async () => {
    const store = new FileStore(join(ICEBERG_FIXTURES, "big_query_error"));
    const table = await loadIcebergTable(store);
    const [reason] = icebergRefusals(table, null, store.uri);
    expect(reason).toContain("'gs://laura-test-test-bucket/table_name'");
    expect(reason).toContain(`'${store.uri}'`);
  });
});

describe("copyIcebergFixture", () => {
  it("rewrites lineitem_iceberg's locations so that nothing is refused and every file is still read", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lineitem"));
    const { reasons, entries } = await refusalsAt(dir);
    expect(reasons).toEqual([]);
    const location = pathToFileURL(dir).href;
    expect(entries?.map((e) => e.path)).toEqual([
      `${location}/data/00000-5-dad9988f-2a3b-464c-adb6-6034de93da19-00001.parquet`,
    ]);
    expect(entries?.[0]?.manifest.path.startsWith(`${location}/metadata/`)).toBe(true);
    const engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
    try {
      const [row] = await engine.query<{ n: string }>(
        `select count(*) as n from read_parquet(${sqlList((entries ?? []).map((e) => join(dir, e.key ?? "")))})`,
      );
      expect(Number(row?.n)).toBe(51_793);
    } finally {
      engine.close();
    }
  });

  it("keeps each Avro file's writer schema and header metadata, and the metadata's 64-bit ids", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lineitem-avro"));
    const name = "179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro";
    const before = decodeAvroFile(
      await readFile(join(ICEBERG_FIXTURES, "iceberg/lineitem_iceberg/metadata", name)),
      name,
    );
    const after = decodeAvroFile(await readFile(join(dir, "metadata", name)), name);
    expect(after.schemaText).toBe(before.schemaText);
    expect(after.meta).toEqual(before.meta);
    expect(after.codec).toBe(before.codec);
    expect(after.records).toHaveLength(before.records.length);
    const json = parseJson(await readFile(join(dir, "metadata/v2.metadata.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(json["current-snapshot-id"]).toBe(2354745328521181395n);
    expect(json.location).toBe(pathToFileURL(dir).href);
  });

  it("rewrites v1 tables' manifests lists and gzip metadata too", async () => {
    const v1 = await copyIcebergFixture("iceberg_v1_deprecated/default/legacy_v1", join(scratch, "v1"));
    expect((await refusalsAt(v1)).reasons).toEqual([]);
    const gz = await copyIcebergFixture("iceberg/lineitem_iceberg_gz_no_hint", join(scratch, "gz"));
    const { reasons, entries } = await refusalsAt(gz);
    expect(reasons).toEqual([]);
    expect(entries?.[0]?.key).toBe("data/00000-2-371a340c-ded5-4e85-aa49-9c788d6f21cd-00001.parquet");
  });
});

describe("icebergRefusals on edited copies", () => {
  it("refuses encrypted tables: encryption keys in the metadata, key metadata on files", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "encrypted"));
    await editMetadata(dir, (json) => {
      json["encryption-keys"] = [{ "key-id": "k1", "encrypted-key-metadata": "AAAA" }];
    });
    await editDataFiles(dir, ["179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro"], (f, df) =>
      f.set(df, 131, "key_metadata", Buffer.from([1, 2])),
    );
    const { reasons, entries } = await refusalsAt(dir);
    expect(entries?.[0]?.keyMetadata).toEqual(Buffer.from([1, 2]));
    expect(reasons).toEqual([
      "the table metadata lists encryption keys: the table is encrypted",
      "1 live file(s) or their manifests carry encryption key metadata",
    ]);
  });

  it("refuses data files that are not Parquet", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "avro-data"));
    await editDataFiles(dir, ["179b4fb1-0366-4f7d-ad35-99ee8da0abf5-m1.avro"], (f, df) =>
      f.set(df, 101, "file_format", "AVRO"),
    );
    expect((await refusalsAt(dir)).reasons).toEqual(["data files are AVRO, not Parquet"]);
  });

  it("refuses an unknown partition transform and an unknown column type, loading the table all the same", async () => {
    const dir = await copyIcebergFixture("partition_integer", join(scratch, "unknown"));
    await editMetadata(dir, (json) => {
      const [spec] = json["partition-specs"] as { fields: { transform: string }[] }[];
      if (spec?.fields[0]) spec.fields[0].transform = "zorder";
      const [schema] = json.schemas as { fields: { type: unknown }[] }[];
      if (schema?.fields[2]) schema.fields[2].type = "variant";
    });
    const { reasons, entries } = await refusalsAt(dir);
    expect(entries?.map((e) => Number(e.partition.partition_col)).sort((a, b) => a - b)).toEqual([42, 1337]);
    expect(reasons).toEqual([
      "partition field 'partition_col' uses the transform 'zorder', which the agent does not know",
      "column 'event_type': the type 'variant' is not one the agent can rewrite",
    ]);
  });
});
