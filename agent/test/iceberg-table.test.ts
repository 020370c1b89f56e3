import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  currentSchema,
  currentSnapshot,
  duckdbColumns,
  fieldById,
  IcebergError,
  keyOf,
  keyOfPath,
  loadIcebergTable,
  locationMismatch,
  mappedFieldId,
  nameMapping,
  parseJson,
  parseJsonValue,
  readSnapshotFiles,
  snapshotAtRef,
  stringifyJson,
  typeString,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import { copyIcebergFixture, ICEBERG_FIXTURES } from "./support/iceberg.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-table-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const storeOf = (name: string) => new FileStore(join(ICEBERG_FIXTURES, name));
const load = (name: string, metadataLocation?: string) =>
  loadIcebergTable(storeOf(name), metadataLocation === undefined ? {} : { metadataLocation });

describe("finding the current metadata file", () => {
  it("follows version-hint.text (N names vN.metadata.json)", async () => {
    const table = await load("iceberg/lineitem_iceberg");
    expect(table.metadataKey).toBe("metadata/v2.metadata.json");
    expect(table.metadata.currentSnapshotId).toBe(2354745328521181395n);
  });

  it("takes the highest version when there is no hint (lineitem_iceberg_no_hint)", async () => {
    const table = await load("iceberg/lineitem_iceberg_no_hint");
    expect(table.metadataKey).toBe("metadata/v2.metadata.json");
  });

  it("reads gzip-compressed metadata named vN.gz.metadata.json, with and without a hint", async () => {
    for (const name of ["iceberg/lineitem_iceberg_gz", "iceberg/lineitem_iceberg_gz_no_hint"]) {
      const table = await load(name);
      expect(table.metadataKey).toBe("metadata/v2.gz.metadata.json");
      expect(table.metadata.tableUuid).toBe("cadbf370-2450-4103-a393-668c16aed805");
      expect(table.metadata.currentSnapshotId).toBe(4468019210336628573n);
    }
  });

  it("orders NNNNN-uuid.metadata.json files by their number (null_stats has 00000 to 00003)", async () => {
    const table = await load("null_stats/default/test_nulls");
    expect(table.metadataKey).toBe("metadata/00003-9d6a621e-8a72-4190-a880-f6ca02e32b86.metadata.json");
  });

  it("takes the only metadata file of a folder that has no numbered one (vfinal.metadata.json)", async () => {
    const table = await load("equality_delete_cross_partition/warehouse/ns/t");
    expect(table.metadataKey).toBe("metadata/vfinal.metadata.json");
  });

  it("reads the metadata file named by key or by a URI under the root", async () => {
    const store = storeOf("iceberg/lineitem_iceberg");
    const byKey = await loadIcebergTable(store, { metadataLocation: "metadata/v1.metadata.json" });
    const byUri = await loadIcebergTable(store, {
      metadataLocation: store.uriOf("metadata/v1.metadata.json"),
    });
    expect(byKey.metadata.currentSnapshotId).toBe(7817332053627255703n);
    expect(byUri.metadataKey).toBe("metadata/v1.metadata.json");
  });

  it("refuses a metadata URI outside the table's root", async () => {
    await expect(load("iceberg/lineitem_iceberg", "file:///elsewhere/v1.metadata.json")).rejects.toThrow(
      "is not under the table's root",
    );
  });

  it("ignores a hint naming a file that does not exist", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "stale-hint"));
    await writeFile(join(dir, "metadata/version-hint.text"), "9");
    expect((await loadIcebergTable(new FileStore(dir))).metadataKey).toBe("metadata/v2.metadata.json");
  });

  it("follows a hint that lags behind the newest commit to the last of the versions after it", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "lagging-hint"));
    await writeFile(join(dir, "metadata/version-hint.text"), "1");
    expect((await loadIcebergTable(new FileStore(dir))).metadataKey).toBe("metadata/v2.metadata.json");
  });

  it("says there is no table where there is no metadata, and names a file that is not JSON", async () => {
    const empty = await mkdtemp(join(scratch, "empty-"));
    await expect(loadIcebergTable(new FileStore(empty))).rejects.toMatchObject({ code: "not_a_table" });
    const bad = load("bad_data", "bad_iceberg_metadata.json");
    await expect(bad).rejects.toBeInstanceOf(IcebergError);
    await expect(bad).rejects.toThrow(/bad_iceberg_metadata\.json is not valid JSON/);
  });
});

describe("table metadata", () => {
  it("keeps every v2 field (lineitem_iceberg)", async () => {
    const { metadata: m } = await load("iceberg/lineitem_iceberg");
    expect(m).toMatchObject({
      formatVersion: 2,
      tableUuid: "cc2317c6-1937-45fc-b29f-935ff34bcf22",
      location: "./lineitem_iceberg",
      lastSequenceNumber: 2,
      lastUpdatedMs: 1746188480005,
      lastColumnId: 16,
      currentSchemaId: 0,
      defaultSpecId: 0,
      lastPartitionId: 999,
      defaultSortOrderId: 0,
      sortOrders: [{ orderId: 0, fields: [] }],
      properties: { "write.parquet.compression-codec": "zstd" },
      encryptionKeys: null,
      statistics: [],
    });
    expect(
      m.snapshots.map((s) => [s.snapshotId, s.parentSnapshotId, s.sequenceNumber, s.summary.operation]),
    ).toEqual([
      [7817332053627255703n, null, 1, "append"],
      [2354745328521181395n, 7817332053627255703n, 2, "overwrite"],
    ]);
    expect(m.snapshots[1]?.manifestList).toBe(
      "lineitem_iceberg/metadata/snap-2354745328521181395-1-179b4fb1-0366-4f7d-ad35-99ee8da0abf5.avro",
    );
    expect(m.snapshotLog.map((e) => e.snapshotId)).toEqual([7817332053627255703n, 2354745328521181395n]);
    expect(m.metadataLog).toEqual([
      { timestampMs: 1746188479060, metadataFile: "lineitem_iceberg/metadata/v1.metadata.json" },
    ]);
    expect(m.refs).toEqual({
      main: {
        snapshotId: 2354745328521181395n,
        type: "branch",
        minSnapshotsToKeep: null,
        maxSnapshotAgeMs: null,
        maxRefAgeMs: null,
      },
    });
    expect(m.raw["current-snapshot-id"]).toBe(2354745328521181395n);
  });

  it("fills in v1's single schema and partition spec, sequence numbers 0 and the main branch (iceberg_v1_deprecated)", async () => {
    const table = await load("iceberg_v1_deprecated/default/legacy_v1");
    const m = table.metadata;
    expect(m.formatVersion).toBe(1);
    expect(m.raw.schemas).toBeUndefined();
    expect(currentSchema(table).fields.map((f) => f.name)).toEqual(["id", "category", "amount"]);
    expect(m.partitionSpecs).toEqual([
      {
        specId: 0,
        fields: [{ sourceId: 2, fieldId: 1000, name: "category", transform: { kind: "identity" } }],
      },
    ]);
    expect(m.lastSequenceNumber).toBe(0);
    expect(m.snapshots[0]?.sequenceNumber).toBe(0);
    expect(m.snapshots[0]?.manifestList).toBeNull();
    expect(m.snapshots[0]?.manifests).toHaveLength(1);
    expect(m.refs.main?.snapshotId).toBe(m.currentSnapshotId);
  });

  it("loads a v3 table and keeps fields it does not model in raw (iceberg_v1_repro's newest metadata)", async () => {
    const table = await load("iceberg_v1_repro/repro/merch_v1");
    expect(table.metadataKey).toBe("metadata/00004-v3-upgraded-v1-null-counts.metadata.json");
    expect(table.metadata.formatVersion).toBe(3);
    expect(table.metadata.raw["next-row-id"]).toBeDefined();
  });

  it("treats current-snapshot-id -1 as no snapshot", async () => {
    const table = await load("custom_write_paths");
    expect(table.metadata.currentSnapshotId).toBeNull();
    expect(currentSnapshot(table)).toBeNull();
    expect(table.metadata.refs).toEqual({});
  });

  it("reads branches and tags with their retention, statistics files and encryption keys", async () => {
    const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(scratch, "refs"));
    const file = join(dir, "metadata/v2.metadata.json");
    const json = parseJson(await readFile(file, "utf8")) as Record<string, unknown>;
    json.refs = {
      main: {
        "snapshot-id": 2354745328521181395n,
        type: "branch",
        "max-snapshot-age-ms": 86400000,
        "min-snapshots-to-keep": 2,
      },
      "before-overwrite": { "snapshot-id": 7817332053627255703n, type: "tag", "max-ref-age-ms": 604800000 },
    };
    json.statistics = [
      {
        "snapshot-id": 2354745328521181395n,
        "statistics-path": `${json.location}/metadata/s.puffin`,
        "file-size-in-bytes": 10,
        "file-footer-size-in-bytes": 4,
        "blob-metadata": [],
      },
    ];
    json["partition-statistics"] = [
      {
        "snapshot-id": 2354745328521181395n,
        "statistics-path": `${json.location}/metadata/p.parquet`,
        "file-size-in-bytes": 20,
      },
    ];
    json["encryption-keys"] = [{ "key-id": "k1", "encrypted-key-metadata": "AAAA" }];
    await writeFile(file, stringifyJson(json, 2));

    const store = new FileStore(dir);
    const table = await loadIcebergTable(store);
    expect(table.metadata.refs["before-overwrite"]).toEqual({
      snapshotId: 7817332053627255703n,
      type: "tag",
      minSnapshotsToKeep: null,
      maxSnapshotAgeMs: null,
      maxRefAgeMs: 604800000,
    });
    expect(table.metadata.refs.main).toMatchObject({ maxSnapshotAgeMs: 86400000, minSnapshotsToKeep: 2 });
    expect(table.metadata.statistics).toEqual([
      { snapshotId: 2354745328521181395n, path: `${json.location}/metadata/s.puffin`, fileSizeInBytes: 10 },
    ]);
    expect(table.metadata.partitionStatistics[0]?.fileSizeInBytes).toBe(20);
    expect(table.metadata.encryptionKeys).toHaveLength(1);
    expect(snapshotAtRef(table, "before-overwrite").sequenceNumber).toBe(1);
    const tagged = await readSnapshotFiles(store, table, { ref: "before-overwrite" });
    expect(tagged.entries.reduce((n, e) => n + e.recordCount, 0)).toBe(60_175);
    expect(() => snapshotAtRef(table, "nope")).toThrow(
      "has no branch or tag 'nope' (it has main, before-overwrite)",
    );
  });
});

describe("where the recorded files are", () => {
  it("maps paths under a relative recorded location to keys, and reports the location mismatch", async () => {
    const table = await load("iceberg/lineitem_iceberg");
    expect(keyOf(table, "lineitem_iceberg/data/x.parquet")).toBe("data/x.parquet");
    expect(keyOf(table, "./lineitem_iceberg/data/x.parquet")).toBe("data/x.parquet");
    expect(keyOf(table, "s3://bucket/elsewhere/data/x.parquet")).toBeNull();
    expect(table.locationMismatch).toEqual({ recorded: "./lineitem_iceberg", store: table.storeUri });
  });

  it("maps by the store's own root first, then by the recorded location", () => {
    const store = "s3://lake/tables/t/";
    expect(keyOfPath("s3://lake/tables/t/data/a.parquet", "s3://old/t", store)).toBe("data/a.parquet");
    expect(keyOfPath("s3a://old/t/data/b=%3A/a.parquet", "s3://old/t", store)).toBe("data/b=%3A/a.parquet");
    expect(keyOfPath("file:/tmp/t/data/a.parquet", "file:///tmp/t", "file:///mnt/t/")).toBe("data/a.parquet");
    expect(keyOfPath("file://data/persistent/t/data/a.parquet", "file://data/persistent/t", store)).toBe(
      "data/a.parquet",
    );
    expect(keyOfPath("s3://lake/tables/t/../u/a.parquet", "s3://old/t", store)).toBeNull();
    expect(keyOfPath("s3://lake/tables/tt/a.parquet", "s3://lake/tables/t", store)).toBeNull();
  });

  it("finds no mismatch between spellings of the same root (s3a, trailing slash, file:/)", () => {
    expect(locationMismatch("s3a://lake/t", "s3://lake/t/")).toBeNull();
    expect(locationMismatch("file:/tmp/t", "file:///tmp/t/")).toBeNull();
    expect(locationMismatch("s3://lake/t2", "s3://lake/t/")).toEqual({
      recorded: "s3://lake/t2",
      store: "s3://lake/t/",
    });
    expect(locationMismatch("gs://laura-test-test-bucket/table_name", "s3://lake/t/")).not.toBeNull();
  });

  it("says which file lies outside a table whose recorded paths share nothing with its location (big_query_error)", async () => {
    const store = storeOf("big_query_error");
    const table = await loadIcebergTable(store);
    expect(table.metadata.location).toBe("gs://laura-test-test-bucket/table_name");
    await expect(readSnapshotFiles(store, table)).rejects.toThrow(
      /manifest list of snapshot 5128775320967886225 is recorded at data\/persistent\/big_query_error\/.*outside the table location/,
    );
  });
});

describe("schemas", () => {
  it("parses nested types with their ids and maps top-level columns to DuckDB (column_mapping)", async () => {
    const table = await load("column_mapping/warehouse/default.db/my_table");
    const schema = currentSchema(table);
    expect(schema.fields.map((f) => `${f.id}:${f.name}:${typeString(f.type)}`)).toEqual([
      "1:id:long",
      "2:name:string",
      "3:age:long",
      "4:attributes:map<string, string>",
      "5:scores:list<long>",
      "6:profile:struct<email: string, verified: boolean>",
    ]);
    expect(fieldById(schema, 10)?.path).toEqual(["profile", "email"]);
    expect(fieldById(schema, 7)?.path).toEqual(["attributes", "key"]);
    expect(fieldById(schema, 9)?.path).toEqual(["scores", "element"]);
    expect(duckdbColumns(schema)).toEqual([
      { name: "id", type: "BIGINT" },
      { name: "name", type: "VARCHAR" },
      { name: "age", type: "BIGINT" },
      { name: "attributes", type: "MAP(VARCHAR, VARCHAR)" },
      { name: "scores", type: "BIGINT[]" },
      { name: "profile", type: 'STRUCT("email" VARCHAR, "verified" BOOLEAN)' },
    ]);
  });

  it("maps lineitem's decimals and dates", async () => {
    const columns = duckdbColumns(currentSchema(await load("iceberg/lineitem_iceberg")));
    expect(columns).toHaveLength(16);
    expect(columns.slice(4, 5)).toEqual([{ name: "l_quantity", type: "DECIMAL(15,2)" }]);
    expect(columns[10]).toEqual({ name: "l_shipdate", type: "DATE" });
  });

  it("refuses to map a type DuckDB has no counterpart for (timestamptz_ns)", async () => {
    const table = await load("timestamptz_ns");
    expect(() => duckdbColumns(currentSchema(table))).toThrow(/column 'val': .*timestamptz_ns/);
  });

  it("reads the name mapping property, nested names included", async () => {
    const nested = nameMapping(await load("column_mapping/warehouse/default.db/my_table"));
    expect(nested && mappedFieldId(nested, ["profile", "email"])).toBe(10);
    expect(nested && mappedFieldId(nested, ["attributes", "value"])).toBe(8);
    expect(nested && mappedFieldId(nested, ["profile", "missing"])).toBeNull();
    const flat = nameMapping(await load("name_mapping/warehouse_1/mydb/t1"));
    expect(flat).toEqual([
      { fieldId: 1, names: ["a"], fields: [] },
      { fieldId: 3, names: ["b"], fields: [] },
    ]);
    expect(nameMapping(await load("iceberg/lineitem_iceberg"))).toBeNull();
  });

  it("keeps v3 column defaults and decodes them by type (add_columns_with_defaults)", async () => {
    const schema = currentSchema(
      await load("add_columns_with_defaults/default.db/add_columns_with_defaults"),
    );
    const byName = new Map(schema.fields.map((f) => [f.name, f]));
    const decoded = (name: string) => {
      const field = byName.get(name);
      if (!field) throw new Error(name);
      return parseJsonValue(field.type, field.initialDefault);
    };
    expect(decoded("col_integer")).toBe(342342);
    expect(decoded("col_date")).toBe(12345);
    expect(decoded("col_decimal")).toEqual({ unscaled: 1234500n, scale: 2 });
    expect(decoded("col_timestamptz")).toBe(12345n);
    expect(decoded("col_fixed")).toEqual(Buffer.from("010203ff03", "hex"));
    expect(byName.get("col1")?.initialDefault).toBeUndefined();
  });
});
