import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlIdent, sqlList, sqlString } from "../src/engine/duckdb.ts";
import {
  currentSchema,
  decodeAvroFile,
  type IcebergTable,
  loadIcebergTable,
  type ManifestEntry,
  mappedFieldId,
  nameMapping,
  parseDecimal,
  readManifestEntries,
  readSnapshotFiles,
  type SnapshotChoice,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import { ICEBERG_FIXTURES } from "./support/iceberg.ts";

let engine: Engine;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-files-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});
afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function open(name: string, choice: SnapshotChoice = {}) {
  const store = new FileStore(join(ICEBERG_FIXTURES, name));
  const table = await loadIcebergTable(store);
  return { store, table, ...(await readSnapshotFiles(store, table, choice)) };
}
const localPath = (table: IcebergTable, e: ManifestEntry) =>
  join(new URL(table.storeUri).pathname, e.key ?? "");
const rows = (entries: ManifestEntry[]) => entries.reduce((n, e) => n + e.recordCount, 0);
const dataFiles = (entries: ManifestEntry[]) => entries.filter((e) => e.content === "data");

async function countRows(paths: string[]): Promise<number> {
  const [row] = await engine.query<{ n: string }>(
    `select count(*) as n from read_parquet(${sqlList(paths)})`,
  );
  return Number(row?.n);
}

/** Parquet column names by Iceberg field id, as the writer stamped them. */
async function columnsById(path: string): Promise<Map<number, string>> {
  const columns = await engine.query<{ name: string; field_id: string | null }>(
    `select name, field_id from parquet_schema(${sqlString(path)})`,
  );
  return new Map(columns.filter((c) => c.field_id !== null).map((c) => [Number(c.field_id), c.name]));
}

describe("lineitem_iceberg", () => {
  it("has one live data file of 51,793 rows after its overwrite, as DuckDB counts them", async () => {
    const { table, entries, manifests, snapshot } = await open("iceberg/lineitem_iceberg");
    expect(snapshot.summary["total-records"]).toBe("51793");
    expect(manifests.map((m) => [m.content, m.sequenceNumber, m.addedRowsCount, m.deletedRowsCount])).toEqual(
      [
        ["data", 2, 51793, 0],
        ["data", 2, 0, 60175],
      ],
    );
    expect(entries).toHaveLength(1);
    expect(rows(entries)).toBe(51_793);
    expect(await countRows(entries.map((e) => localPath(table, e)))).toBe(51_793);
  });

  it("had 60,175 rows in its first snapshot, by the manifests and by DuckDB", async () => {
    const { table, entries } = await open("iceberg/lineitem_iceberg", { snapshotId: 7817332053627255703n });
    expect(rows(dataFiles(entries))).toBe(60_175);
    expect(await countRows(entries.map((e) => localPath(table, e)))).toBe(60_175);
  });

  it("keeps the overwritten file as a DELETED entry that is not live", async () => {
    const { store, table, manifests } = await open("iceberg/lineitem_iceberg");
    const removed = await readManifestEntries(store, table, manifests[1] as (typeof manifests)[number]);
    expect(removed.map((e) => [e.status, e.key, e.recordCount, e.snapshotId])).toEqual([
      [
        "deleted",
        "data/00000-1-66fee7c2-c97c-4af9-963d-930afd99ace4-00001.parquet",
        60_175,
        2354745328521181395n,
      ],
    ]);
  });

  it("inherits null sequence numbers of ADDED entries from the manifest", async () => {
    const { store, table, entries } = await open("iceberg/lineitem_iceberg");
    const entry = entries[0] as ManifestEntry;
    const raw = decodeAvroFile(
      await readFile(join(new URL(store.uri).pathname, entry.manifest.key ?? "")),
      "m1",
    );
    expect(raw.records[0]?.sequence_number).toBeNull();
    expect([entry.status, entry.dataSequenceNumber, entry.fileSequenceNumber, entry.snapshotId]).toEqual([
      "added",
      2,
      2,
      table.metadata.currentSnapshotId,
    ]);
  });

  it("decodes bounds by column type, agreeing with DuckDB's min and max", async () => {
    const { table, entries } = await open("iceberg/lineitem_iceberg");
    const e = entries[0] as ManifestEntry;
    const [stats] = await engine.query<Record<string, string>>(
      `select min(l_shipdate) - DATE '1970-01-01' as d0, max(l_shipdate) - DATE '1970-01-01' as d1,
              min(l_quantity)::VARCHAR as q0, max(l_extendedprice)::VARCHAR as p1, min(l_orderkey)::VARCHAR as k0,
              min(l_shipmode) as m0
       from read_parquet(${sqlString(localPath(table, e))})`,
    );
    expect(e.lowerBounds.get(11)).toBe(Number(stats?.d0));
    expect(e.upperBounds.get(11)).toBe(Number(stats?.d1));
    expect(e.lowerBounds.get(5)).toEqual(parseDecimal(stats?.q0 ?? "", 2));
    expect(e.upperBounds.get(6)).toEqual(parseDecimal(stats?.p1 ?? "", 2));
    expect(e.lowerBounds.get(1)).toBe(BigInt(stats?.k0 ?? ""));
    expect(e.lowerBounds.get(15)).toBe(stats?.m0);
    expect(e.valueCounts.get(1)).toBe(51_793);
    expect(e.nullValueCounts.get(1)).toBe(0);
    expect(e.columnSizes.size).toBe(16);
    expect(e.format).toBe("PARQUET");
    expect(e.splitOffsets).toEqual([4]);
  });
});

describe("format version 1", () => {
  it("reads a v1 manifest list with sequence numbers 0 (lineitem_iceberg_gz, 111,968 rows)", async () => {
    const { table, entries, manifests } = await open("iceberg/lineitem_iceberg_gz");
    expect(manifests.map((m) => [m.sequenceNumber, m.content, m.addedFilesCount])).toEqual([[0, "data", 1]]);
    expect(entries.map((e) => [e.dataSequenceNumber, e.fileSequenceNumber])).toEqual([[0, 0]]);
    expect(rows(entries)).toBe(111_968);
    expect(await countRows(entries.map((e) => localPath(table, e)))).toBe(111_968);
  });

  it("reads a snapshot that lists manifests instead of a manifest list (iceberg_v1_deprecated)", async () => {
    const { table, entries, manifests } = await open("iceberg_v1_deprecated/default/legacy_v1");
    expect(manifests.map((m) => [m.specId, m.content, m.length])).toEqual([[0, "data", null]]);
    expect(entries.map((e) => [e.partition, e.snapshotId, e.dataSequenceNumber])).toEqual([
      [{ category: "alpha" }, 2456114553637229296n, 0],
      [{ category: "beta" }, 2456114553637229296n, 0],
    ]);
    expect(await countRows(entries.map((e) => localPath(table, e)))).toBe(rows(entries));
  });
});

describe("delete files", () => {
  it("lists equality deletes with their equality field ids and later sequence numbers (equality_deletes)", async () => {
    const { entries } = await open("equality_deletes/warehouse/mydb/mytable");
    const deletes = entries.filter((e) => e.content === "equality_deletes");
    expect(
      dataFiles(entries)
        .map((e) => e.dataSequenceNumber)
        .sort(),
    ).toEqual([1, 5]);
    expect(deletes.map((e) => [e.dataSequenceNumber, e.equalityIds])).toEqual([
      [6, [2]],
      [4, [1, 2]],
      [3, [1]],
      [2, [2]],
    ]);
    expect(deletes.every((e) => e.manifest.content === "deletes")).toBe(true);
  });

  it("lists a v3 deletion vector as position deletes in Puffin, naming the data file it applies to", async () => {
    const { entries } = await open(
      "legacy_bare_deletion_vector/warehouse/default/legacy_bare_deletion_vector",
    );
    const [dv] = entries.filter((e) => e.content === "position_deletes");
    expect(dv?.format).toBe("PUFFIN");
    expect(dv?.referencedDataFile).toMatch(/data\/00000-0-cac6cfea-266f-44f8-9a3a-70dd8fb68014\.parquet$/);
  });
});

describe("statistics and field ids", () => {
  it("types partition values and bounds of uuid, timestamptz and nested-map tables", async () => {
    const uuid = await open("uuid");
    for (const e of uuid.entries) {
      const path = localPath(uuid.table, e);
      const column = sqlIdent((await columnsById(path)).get(1) ?? "");
      const values = await engine.query<{ u: string }>(
        `select ${column}::VARCHAR as u from read_parquet(${sqlString(path)})`,
      );
      expect(values.map((v) => v.u)).toContain(e.lowerBounds.get(1));
      expect(values.map((v) => v.u)).toContain(e.upperBounds.get(1));
    }
    const maps = await open("map_stats/default.db/map_stats");
    const [first] = maps.entries;
    expect(first?.lowerBounds.get(1)).toBe(first?.upperBounds.get(1));
    expect(typeof first?.lowerBounds.get(1)).toBe("bigint");
    expect(first?.lowerBounds.has(4)).toBe(false);
  });

  it("leaves statistics a writer did not record absent rather than zero (null_stats)", async () => {
    const { entries } = await open("null_stats/default/test_nulls");
    expect(entries).toHaveLength(3);
    for (const e of entries) {
      expect(e.nullValueCounts.size).toBe(0);
      expect(e.lowerBounds.size).toBeGreaterThan(0);
    }
  });

  it("maps files written before columns were added by field id (add_columns_with_defaults)", async () => {
    const { table, entries } = await open("add_columns_with_defaults/default.db/add_columns_with_defaults");
    const schema = currentSchema(table);
    const [newer, older] = entries;
    if (!newer || !older) throw new Error("expected two files");
    expect([older.dataSequenceNumber, newer.dataSequenceNumber]).toEqual([1, 2]);
    const olderColumns = await columnsById(localPath(table, older));
    const newerColumns = await columnsById(localPath(table, newer));
    expect([...olderColumns.keys()]).toEqual([1]);
    expect([...newerColumns.keys()]).toEqual(schema.fields.map((f) => f.id));
    const missing = schema.fields.filter((f) => !olderColumns.has(f.id));
    expect(missing.map((f) => f.name)).toContain("col_integer");
    expect(missing.every((f) => f.initialDefault !== undefined)).toBe(true);
    const column = sqlIdent(newerColumns.get(3) ?? "");
    const [row] = await engine.query<{ v: number }>(
      `select min(${column}) as v from read_parquet(${sqlString(localPath(table, newer))})`,
    );
    expect(newer.lowerBounds.get(3)).toBe(row?.v);
  });

  it("maps columns of files without field ids through the name mapping (name_mapping)", async () => {
    const { table, entries } = await open("name_mapping/warehouse_1/mydb/t1");
    const mapping = nameMapping(table);
    if (!mapping) throw new Error("expected a name mapping");
    const [entry] = entries;
    const path = localPath(table, entry as ManifestEntry);
    expect((await columnsById(path)).size).toBe(0);
    const columns = await engine.query<{ column_name: string }>(
      `describe select * from read_parquet(${sqlString(path)})`,
    );
    const ids = columns.map((c) => mappedFieldId(mapping, [c.column_name]));
    expect(ids).toEqual(currentSchema(table).fields.map((f) => f.id));
    expect(await countRows([path])).toBe(rows(entries));
  });

  it("gives no key for files outside the table's location (column_mapping, generated_bounds)", async () => {
    const outside = await open("column_mapping/warehouse/default.db/my_table");
    expect(outside.entries.map((e) => [e.key, e.path])).toEqual([
      [null, "data/persistent/column_mapping/warehouse/example/mock_data.parquet"],
    ]);
    const generated = await open("generated_bounds");
    expect(generated.entries).toHaveLength(5000);
    expect(generated.entries.every((e) => e.key === null && e.path.startsWith("s3://fake-bucket/"))).toBe(
      true,
    );
    expect(rows(generated.entries)).toBe(5_000_000);
  });
});
