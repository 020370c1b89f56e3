import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlList, sqlString } from "../src/engine/duckdb.ts";
import {
  AvroFields,
  type AvroSchema,
  type CommitOutcome,
  commitReplace,
  currentSchema,
  decodeAvroFile,
  encodeValue,
  IcebergError,
  type IcebergSchema,
  type IcebergTable,
  isPrimitive,
  loadIcebergTable,
  type ManifestEntry,
  metadataVersion,
  type NewDataFile,
  parseDecimal,
  parseJson,
  readManifestEntries,
  readSnapshotFiles,
} from "../src/iceberg/index.ts";
import { FileStore } from "../src/store/index.ts";
import { copyIcebergFixture, ICEBERG_FIXTURES } from "./support/iceberg.ts";

const REST_SPEC = join(ICEBERG_FIXTURES, "../catalog-specs/iceberg-rest-catalog-open-api.yaml");

let engine: Engine;
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "iceberg-commit-"));
  engine = await Engine.open({ tempDir: join(scratch, "duckdb") });
});
afterAll(async () => {
  engine?.close();
  await rm(scratch, { recursive: true, force: true });
});

async function open(fixture: string, name: string) {
  const dir = await copyIcebergFixture(fixture, join(scratch, name));
  const store = new FileStore(dir);
  const table = await loadIcebergTable(store);
  return { dir, store, table, base: await readSnapshotFiles(store, table) };
}

const keyOf = (e: ManifestEntry) => e.key ?? "";

/** Writes the rows of `inputs` to `dir/key` as one Parquet file, columns stamped with the schema's field ids. */
async function mergeFiles(dir: string, inputs: string[], key: string, schema: IcebergSchema): Promise<void> {
  const paths = inputs.map((k) => join(dir, k));
  const present = await engine.query<{ column_name: string }>(
    `describe select * from read_parquet(${sqlList(paths)})`,
  );
  const names = new Set(present.map((c) => c.column_name));
  const ids = schema.fields.filter((f) => names.has(f.name)).map((f) => `${sqlString(f.name)}: ${f.id}`);
  await engine.run(
    `copy (select * from read_parquet(${sqlList(paths)})) to ${sqlString(join(dir, key))} (format parquet, field_ids {${ids.join(", ")}})`,
  );
}

/** The new file's metrics as DuckDB computes them: counts for every column, bounds for `bounded` ones. */
async function newDataFile(
  dir: string,
  key: string,
  table: IcebergTable,
  partition: Map<number, unknown>,
  bounded: string[],
): Promise<NewDataFile> {
  const schema = currentSchema(table);
  const path = sqlString(join(dir, key));
  const present = new Set(
    (await engine.query<{ column_name: string }>(`describe select * from read_parquet(${path})`)).map(
      (c) => c.column_name,
    ),
  );
  const fields = schema.fields.filter((f) => present.has(f.name));
  const exprs = fields.flatMap((f) => [
    `count(${f.name})::VARCHAR as c${f.id}`,
    ...(bounded.includes(f.name)
      ? f.type.kind === "primitive" && f.type.name === "date"
        ? [
            `min(${f.name}) - DATE '1970-01-01' as lo${f.id}`,
            `max(${f.name}) - DATE '1970-01-01' as hi${f.id}`,
          ]
        : [`min(${f.name})::VARCHAR as lo${f.id}`, `max(${f.name})::VARCHAR as hi${f.id}`]
      : []),
  ]);
  const [row = {}] = await engine.query<Record<string, string | number>>(
    `select count(*)::VARCHAR as n, ${exprs.join(", ")} from read_parquet(${path})`,
  );
  const n = BigInt(row.n as string);
  const file: NewDataFile = {
    key,
    fileSizeInBytes: (await stat(join(dir, key))).size,
    recordCount: Number(n),
    specId: table.metadata.defaultSpecId,
    partition: partition as NewDataFile["partition"],
    valueCounts: new Map(fields.map((f) => [f.id, n])),
    nullValueCounts: new Map(fields.map((f) => [f.id, n - BigInt(row[`c${f.id}`] as string)])),
    lowerBounds: new Map(),
    upperBounds: new Map(),
  };
  for (const f of fields.filter((f) => bounded.includes(f.name))) {
    if (!isPrimitive(f.type)) continue;
    const value = (text: string | number) =>
      f.type.kind === "decimal"
        ? parseDecimal(String(text), f.type.scale)
        : f.type.kind === "primitive" && f.type.name === "long"
          ? BigInt(text)
          : f.type.kind === "primitive" && (f.type.name === "int" || f.type.name === "date")
            ? Number(text)
            : String(text);
    file.lowerBounds.set(f.id, encodeValue(f.type, value(row[`lo${f.id}`] as string)));
    file.upperBounds.set(f.id, encodeValue(f.type, value(row[`hi${f.id}`] as string)));
  }
  return file;
}

async function rowsAndSum(paths: string[], column: string): Promise<[number, string]> {
  const [row] = await engine.query<{ n: string; s: string }>(
    `select count(*)::VARCHAR as n, sum(${column})::VARCHAR as s from read_parquet(${sqlList(paths)})`,
  );
  return [Number(row?.n), String(row?.s)];
}

/** Every record field without a `field-id`, and every list without an `element-id`, by path. */
function missingIds(schema: AvroSchema, path = ""): string[] {
  if (typeof schema === "string") return [];
  if (Array.isArray(schema)) return schema.flatMap((s) => missingIds(s, path));
  if (schema.type === "record")
    return (schema.fields as { name: string; type: AvroSchema; "field-id"?: unknown }[]).flatMap((f) => [
      ...(Number.isInteger(f["field-id"]) ? [] : [`${path}${f.name}`]),
      ...missingIds(f.type, `${path}${f.name}.`),
    ]);
  if (schema.type === "array")
    return [
      ...(schema.logicalType === "map" || Number.isInteger(schema["element-id"]) ? [] : [`${path}[]`]),
      ...missingIds(schema.items as AvroSchema, `${path}[].`),
    ];
  return typeof schema.type === "object" ? missingIds(schema.type, path) : [];
}

async function avro(dir: string, key: string) {
  return decodeAvroFile(await readFile(join(dir, key)), key);
}

async function metadataFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, "metadata"))).filter((n) => n.endsWith(".metadata.json")).sort();
}

function committed(outcome: CommitOutcome) {
  if (!outcome.committed) throw new Error(`expected a commit, got ${outcome.reason}`);
  return outcome;
}

/** An ajv validator for one schema of the Iceberg REST catalog's OpenAPI description. */
async function restSchema(name: string) {
  const doc = (await SwaggerParser.parse(REST_SPEC)) as { components: unknown };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: "iceberg-rest", components: doc.components });
  const validate = ajv.getSchema(`iceberg-rest#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  return validate;
}

describe("commitReplace on lineitem_iceberg (v2, unpartitioned)", () => {
  it("replaces the live file by a merged one in a new replace snapshot that readers and DuckDB agree on", async () => {
    const { dir, store, table, base } = await open("iceberg/lineitem_iceberg", "lineitem");
    expect(metadataVersion(table)).toBe(2);
    const inputs = base.entries.map(keyOf);
    await mergeFiles(dir, inputs, "data/merged.parquet", currentSchema(table));
    const file = await newDataFile(dir, "data/merged.parquet", table, new Map(), [
      "l_orderkey",
      "l_quantity",
      "l_shipdate",
      "l_shipmode",
    ]);
    const nowMs = Date.now();
    const outcome = committed(
      await commitReplace(store, table, {
        base,
        removed: base.entries,
        added: [file],
        summary: { "lakesmith.job-id": "job_1", "lakesmith.result": '{"rows":51793}', operation: "append" },
        nowMs,
      }),
    );
    expect(outcome).toMatchObject({
      metadataKey: "metadata/v3.metadata.json",
      version: 3,
      sequenceNumber: 3,
    });
    expect(outcome.snapshotId > 0n).toBe(true);
    expect(await readFile(join(dir, "metadata/version-hint.text"), "utf8")).toBe("3");

    const after = await loadIcebergTable(store);
    expect(after.metadataKey).toBe("metadata/v3.metadata.json");
    expect(after.metadata.currentSnapshotId).toBe(outcome.snapshotId);
    expect(after.metadata.lastSequenceNumber).toBe(3);
    expect(after.metadata.refs.main?.snapshotId).toBe(outcome.snapshotId);
    const now = await readSnapshotFiles(store, after);
    expect(
      now.entries.map((e) => [e.key, e.status, e.recordCount, e.dataSequenceNumber, e.snapshotId]),
    ).toEqual([["data/merged.parquet", "added", 51_793, 3, outcome.snapshotId]]);
    // The same rows as the file Spark wrote, so the same bounds as Spark recorded.
    const merged = now.entries[0] as ManifestEntry;
    const old = base.entries[0] as ManifestEntry;
    for (const id of [1, 5, 11, 15]) {
      expect(merged.lowerBounds.get(id)).toEqual(old.lowerBounds.get(id));
      expect(merged.upperBounds.get(id)).toEqual(old.upperBounds.get(id));
    }
    expect(merged.valueCounts.get(16)).toBe(51_793);
    expect(merged.nullValueCounts.get(16)).toBe(0);

    const before = await rowsAndSum(
      inputs.map((k) => join(dir, k)),
      "l_extendedprice",
    );
    expect(before[0]).toBe(51_793);
    expect(await rowsAndSum([join(dir, "data/merged.parquet")], "l_extendedprice")).toEqual(before);

    const snapshot = now.snapshot;
    expect(snapshot.parentSnapshotId).toBe(base.snapshot.snapshotId);
    expect(snapshot.sequenceNumber).toBe(3);
    expect(snapshot.summary).toMatchObject({
      operation: "replace",
      "added-data-files": "1",
      "deleted-data-files": "1",
      "added-records": "51793",
      "deleted-records": "51793",
      "added-files-size": String(file.fileSizeInBytes),
      "removed-files-size": "1225526",
      "changed-partition-count": "1",
      "total-records": "51793",
      "total-data-files": "1",
      "total-files-size": String(file.fileSizeInBytes),
      "total-delete-files": "0",
      "total-position-deletes": "0",
      "total-equality-deletes": "0",
      "lakesmith.job-id": "job_1",
      "lakesmith.result": '{"rows":51793}',
    });
    expect(after.metadata.metadataLog.at(-1)).toEqual({
      timestampMs: table.metadata.lastUpdatedMs,
      metadataFile: `${after.metadata.location}/metadata/v2.metadata.json`,
    });
    expect(after.metadata.snapshotLog.at(-1)).toEqual({ timestampMs: nowMs, snapshotId: outcome.snapshotId });

    // The new added manifest, the rewritten one (the old file DELETED) and the carried one.
    expect(
      now.manifests.map((m) => [
        m.sequenceNumber,
        m.addedFilesCount,
        m.existingFilesCount,
        m.deletedFilesCount,
      ]),
    ).toEqual([
      [3, 1, 0, 0],
      [3, 0, 0, 1],
      [2, 0, 0, 1],
    ]);
    expect(now.manifests[2]?.path).toBe(base.manifests[1]?.path);
    const rewritten = await readManifestEntries(
      store,
      after,
      now.manifests[1] as (typeof now.manifests)[number],
    );
    expect(
      rewritten.map((e) => [e.status, e.key, e.snapshotId, e.dataSequenceNumber, e.fileSequenceNumber]),
    ).toEqual([["deleted", inputs[0], outcome.snapshotId, 2, 2]]);

    const previous = await readSnapshotFiles(store, after, { snapshotId: base.snapshot.snapshotId });
    expect(previous.entries.map(keyOf)).toEqual(inputs);
    expect(
      (
        await rowsAndSum(
          previous.entries.map((e) => join(dir, keyOf(e))),
          "l_extendedprice",
        )
      )[0],
    ).toBe(51_793);
  });

  it("writes manifests and a manifest list with the spec's header keys and a field id on every field", async () => {
    const { dir, store, table, base } = await open("iceberg/lineitem_iceberg", "lineitem-avro");
    await mergeFiles(dir, base.entries.map(keyOf), "data/merged.parquet", currentSchema(table));
    const file = await newDataFile(dir, "data/merged.parquet", table, new Map(), []);
    committed(
      await commitReplace(store, table, {
        base,
        removed: base.entries,
        added: [file],
        summary: {},
        nowMs: 1,
      }),
    );
    const after = await loadIcebergTable(store);
    const now = await readSnapshotFiles(store, after);
    const [added, rewritten] = now.manifests.map((m) => m.key ?? "");
    const list = await avro(dir, (now.snapshot.manifestList ?? "").slice(after.metadata.location.length + 1));
    const manifest = await avro(dir, added ?? "");
    expect(Object.keys(manifest.meta).sort()).toEqual([
      "content",
      "format-version",
      "partition-spec",
      "partition-spec-id",
      "schema",
      "schema-id",
    ]);
    expect(manifest.meta.content?.toString()).toBe("data");
    expect(manifest.meta["format-version"]?.toString()).toBe("2");
    expect(missingIds(manifest.schema)).toEqual([]);
    // The rewritten manifest keeps the schema and header the original's writer gave it.
    const original = await avro(dir, base.manifests[0]?.key ?? "");
    const copy = await avro(dir, rewritten ?? "");
    expect([copy.schemaText, copy.meta]).toEqual([original.schemaText, original.meta]);
    expect(parseJson(manifest.meta.schema?.toString() ?? "")).toMatchObject({
      "schema-id": 0,
      type: "struct",
    });
    expect(manifest.meta["partition-spec"]?.toString()).toBe("[]");
    expect(missingIds(list.schema)).toEqual([]);
    expect(Object.fromEntries(Object.entries(list.meta).map(([k, v]) => [k, v.toString()]))).toMatchObject({
      "snapshot-id": String(after.metadata.currentSnapshotId),
      "parent-snapshot-id": String(base.snapshot.snapshotId),
      "sequence-number": "3",
      "format-version": "2",
    });
  });

  it("writes metadata that the REST catalog's TableMetadata schema accepts", async () => {
    const { dir, store, table, base } = await open("iceberg/lineitem_iceberg", "lineitem-schema");
    await mergeFiles(dir, base.entries.map(keyOf), "data/merged.parquet", currentSchema(table));
    const file = await newDataFile(dir, "data/merged.parquet", table, new Map(), []);
    committed(
      await commitReplace(store, table, {
        base,
        removed: base.entries,
        added: [file],
        summary: {},
        nowMs: Date.now(),
      }),
    );
    const json = JSON.parse(await readFile(join(dir, "metadata/v3.metadata.json"), "utf8"));
    const validate = await restSchema("TableMetadata");
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    expect(json.snapshots).toHaveLength(3);
    const broken = structuredClone(json);
    broken.snapshots[2].summary.operation = "compact";
    expect(validate(broken)).toBe(false);
  });

  it("loses a race to another writer's next version without writing metadata", async () => {
    const { dir, store, table, base } = await open("iceberg/lineitem_iceberg", "lineitem-race");
    await mergeFiles(dir, base.entries.map(keyOf), "data/merged.parquet", currentSchema(table));
    const file = await newDataFile(dir, "data/merged.parquet", table, new Map(), []);
    const theirs = await readFile(join(dir, "metadata/v2.metadata.json"), "utf8");
    await writeFile(join(dir, "metadata/v3.metadata.json"), theirs);
    const outcome = await commitReplace(store, table, {
      base,
      removed: base.entries,
      added: [file],
      summary: {},
      nowMs: Date.now(),
    });
    expect(outcome).toEqual({ committed: false, reason: "exists" });
    expect(await readFile(join(dir, "metadata/v3.metadata.json"), "utf8")).toBe(theirs);
    expect(await readFile(join(dir, "metadata/version-hint.text"), "utf8")).toBe("2");
    expect(await metadataFiles(dir)).toEqual(["v1.metadata.json", "v2.metadata.json", "v3.metadata.json"]);
  });

  it("refuses a table whose metadata a catalog names, before writing anything", async () => {
    const { dir } = await open("iceberg/lineitem_iceberg", "lineitem-catalog");
    await rename(
      join(dir, "metadata/v2.metadata.json"),
      join(dir, "metadata/00002-9a1e4e7b-ef36-4c5c-9d0e-1f4bd1e5b3a1.metadata.json"),
    );
    await rm(join(dir, "metadata/version-hint.text"));
    const store = new FileStore(dir);
    const table = await loadIcebergTable(store);
    const base = await readSnapshotFiles(store, table);
    expect(metadataVersion(table)).toBeNull();
    const before = await readdir(join(dir, "metadata"));
    const attempt = commitReplace(store, table, {
      base,
      removed: base.entries,
      added: [],
      summary: {},
      nowMs: 1,
    });
    await expect(attempt).rejects.toThrow(IcebergError);
    await expect(attempt).rejects.toMatchObject({ code: "unsupported" });
    expect(await readdir(join(dir, "metadata"))).toEqual(before);
  });

  it("refuses to remove a file that is not live in the base snapshot, before writing anything", async () => {
    const { dir, store, table } = await open("iceberg/lineitem_iceberg", "lineitem-stale");
    const first = await readSnapshotFiles(store, table, { snapshotId: 7817332053627255703n });
    const current = await readSnapshotFiles(store, table);
    const before = await readdir(join(dir, "metadata"));
    const removeGone = commitReplace(store, table, {
      base: current,
      removed: first.entries,
      added: [],
      summary: {},
      nowMs: 1,
    });
    await expect(removeGone).rejects.toThrow(/is not a live data file of snapshot 2354745328521181395/);
    const staleBase = commitReplace(store, table, {
      base: first,
      removed: first.entries,
      added: [],
      summary: {},
      nowMs: 1,
    });
    await expect(staleBase).rejects.toThrow(/planned against snapshot 7817332053627255703/);
    expect(await readdir(join(dir, "metadata"))).toEqual(before);
  });

  it("commits to a gzip-compressed table with a plain next version", async () => {
    const { dir, store, table, base } = await open("iceberg/lineitem_iceberg_gz", "lineitem-gz");
    expect([table.metadataKey, metadataVersion(table)]).toEqual(["metadata/v2.gz.metadata.json", 2]);
    const [old] = base.entries;
    const file: NewDataFile = {
      key: "data/merged.parquet",
      fileSizeInBytes: 1000,
      recordCount: old?.recordCount ?? 0,
      specId: 0,
      partition: new Map(),
      valueCounts: new Map(),
      nullValueCounts: new Map(),
      lowerBounds: new Map(),
      upperBounds: new Map(),
    };
    const outcome = committed(
      await commitReplace(store, table, {
        base,
        removed: base.entries,
        added: [file],
        summary: {},
        nowMs: Date.now(),
      }),
    );
    expect((await readFile(join(dir, outcome.metadataKey), "utf8")).startsWith("{")).toBe(true);
    const after = await loadIcebergTable(store);
    expect(after.metadataKey).toBe("metadata/v3.metadata.json");
    expect((await readSnapshotFiles(store, after)).entries.map(keyOf)).toEqual(["data/merged.parquet"]);
  });
});

describe("commitReplace on partition_integer (v2, identity partitions)", () => {
  it("keeps the other file EXISTING with its snapshot and sequence numbers, and marks the replaced one DELETED", async () => {
    const { dir, store, table, base } = await open("partition_integer", "partitioned");
    const replaced = base.entries.find((e) => e.partitionById.get(1000) === 42) as ManifestEntry;
    const other = base.entries.find((e) => e.partitionById.get(1000) === 1337) as ManifestEntry;
    const key = "data/partition_col=42/compacted.parquet";
    await mergeFiles(dir, [keyOf(replaced)], key, currentSchema(table));
    const file = await newDataFile(dir, key, table, new Map([[1000, 42]]), ["user_id", "event_type"]);
    const outcome = committed(
      await commitReplace(store, table, {
        base,
        removed: [replaced],
        added: [file],
        summary: {},
        nowMs: Date.now(),
      }),
    );
    expect(outcome.sequenceNumber).toBe(2);

    const after = await loadIcebergTable(store);
    const now = await readSnapshotFiles(store, after);
    expect(
      now.entries.map((e) => [
        e.key,
        e.status,
        e.snapshotId,
        e.dataSequenceNumber,
        e.fileSequenceNumber,
        e.partitionById.get(1000),
      ]),
    ).toEqual([
      [key, "added", outcome.snapshotId, 2, 2, 42],
      [keyOf(other), "existing", other.snapshotId, 1, 1, 1337],
    ]);
    const existing = now.entries[1] as ManifestEntry;
    expect(existing.lowerBounds).toEqual(other.lowerBounds);
    expect(existing.valueCounts).toEqual(other.valueCounts);
    expect(now.snapshot.summary).toMatchObject({
      "changed-partition-count": "1",
      "total-data-files": "2",
      "total-records": "2",
    });

    const [addedManifest, rewrittenManifest] = now.manifests;
    const int = (n: number) => encodeValue({ kind: "primitive", name: "int" }, n);
    expect(addedManifest?.partitions).toEqual([
      { containsNull: false, containsNan: false, lowerBound: int(42), upperBound: int(42) },
    ]);
    expect(rewrittenManifest?.partitions).toEqual([
      { containsNull: false, containsNan: false, lowerBound: int(42), upperBound: int(1337) },
    ]);
    expect([rewrittenManifest?.minSequenceNumber, rewrittenManifest?.addedSnapshotId]).toEqual([
      1,
      outcome.snapshotId,
    ]);
    const entries = await readManifestEntries(
      store,
      after,
      rewrittenManifest as (typeof now.manifests)[number],
    );
    expect(
      entries.map((e) => [e.status, e.key, e.snapshotId, e.dataSequenceNumber, e.fileSequenceNumber]),
    ).toEqual([
      ["existing", keyOf(other), other.snapshotId, 1, 1],
      ["deleted", keyOf(replaced), outcome.snapshotId, 1, 1],
    ]);
    const raw = await avro(dir, rewrittenManifest?.key ?? "");
    expect(raw.records.map((r) => r.sequence_number)).toEqual([1n, 1n]);

    const partition = (await avro(dir, addedManifest?.key ?? "")).schemaText;
    expect(partition).toContain(
      '{"type":"record","name":"r102","fields":[{"name":"partition_col","type":["null","int"],"default":null,"field-id":1000}]}',
    );
    expect(await rowsAndSum([join(dir, key)], "user_id")).toEqual(
      await rowsAndSum([join(dir, keyOf(replaced))], "user_id"),
    );
  });
});

describe("commitReplace on legacy_v1 (format v1, a snapshot without a manifest list)", () => {
  it("commits a v1 snapshot with a manifest list and no sequence numbers", async () => {
    const { dir, store, table, base } = await open("iceberg_v1_deprecated/default/legacy_v1", "v1");
    expect(table.metadata.formatVersion).toBe(1);
    const alpha = base.entries.find((e) => e.partitionById.get(1000) === "alpha") as ManifestEntry;
    const beta = base.entries.find((e) => e.partitionById.get(1000) === "beta") as ManifestEntry;
    const key = "data/category=alpha/compacted.parquet";
    await mergeFiles(dir, [keyOf(alpha)], key, currentSchema(table));
    const file = await newDataFile(dir, key, table, new Map([[1000, "alpha"]]), ["id", "amount"]);
    const outcome = committed(
      await commitReplace(store, table, {
        base,
        removed: [alpha],
        added: [file],
        summary: {},
        nowMs: Date.now(),
      }),
    );
    expect([outcome.version, outcome.sequenceNumber]).toEqual([3, 0]);

    const after = await loadIcebergTable(store);
    const now = await readSnapshotFiles(store, after);
    expect(now.entries.map((e) => [e.key, e.status, e.snapshotId, e.dataSequenceNumber])).toEqual([
      [key, "added", outcome.snapshotId, 0],
      [keyOf(beta), "existing", beta.snapshotId, 0],
    ]);
    const json = parseJson(await readFile(join(dir, "metadata/v3.metadata.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect("last-sequence-number" in json).toBe(false);
    const snapshot = (json.snapshots as Record<string, unknown>[]).at(-1) as Record<string, unknown>;
    expect("sequence-number" in snapshot).toBe(false);
    expect(snapshot["manifest-list"]).toBe(now.snapshot.manifestList);
    const validate = await restSchema("Snapshot");
    expect(
      validate(JSON.parse(JSON.stringify(snapshot, (_, v) => (typeof v === "bigint" ? Number(v) : v)))),
      JSON.stringify(validate.errors),
    ).toBe(true);

    const list = await avro(dir, (now.snapshot.manifestList ?? "").slice(after.metadata.location.length + 1));
    expect(missingIds(list.schema)).toEqual([]);
    const ids = new AvroFields(list.schema).ids().map(([id]) => id);
    expect(ids).toEqual(expect.arrayContaining([500, 501, 502, 503, 504, 505, 506, 507, 512, 513, 514, 519]));
    expect(ids).not.toContain(515);
    const manifest = await avro(dir, now.manifests[0]?.key ?? "");
    expect(manifest.meta["format-version"]?.toString()).toBe("1");
    expect(missingIds(manifest.schema)).toEqual([]);
    expect(await rowsAndSum([join(dir, key)], "amount")).toEqual(
      await rowsAndSum([join(dir, keyOf(alpha))], "amount"),
    );
  });

  it("lists a manifest the v1 snapshot named without a list with counts read from the manifest", async () => {
    const { dir, store, table, base } = await open("iceberg_v1_deprecated/default/legacy_v1", "v1-carried");
    expect(base.manifests.map((m) => [m.addedSnapshotId, m.addedFilesCount])).toEqual([[null, null]]);
    const key = "data/category=gamma/empty.parquet";
    await mkdir(join(dir, "data/category=gamma"));
    await engine.run(
      `copy (select * from read_parquet(${sqlString(join(dir, keyOf(base.entries[0] as ManifestEntry)))}) limit 0) to ${sqlString(join(dir, key))} (format parquet)`,
    );
    const file = await newDataFile(dir, key, table, new Map([[1000, "gamma"]]), []);
    committed(
      await commitReplace(store, table, { base, removed: [], added: [file], summary: {}, nowMs: Date.now() }),
    );
    const after = await loadIcebergTable(store);
    const now = await readSnapshotFiles(store, after);
    const carried = now.manifests[1];
    expect(carried?.path).toBe(base.manifests[0]?.path);
    expect([
      carried?.addedSnapshotId,
      carried?.addedFilesCount,
      carried?.addedRowsCount,
      carried?.length,
    ]).toEqual([base.snapshot.snapshotId, 2, 3, (await stat(join(dir, base.manifests[0]?.key ?? ""))).size]);
    expect(carried?.partitions?.map((p) => [p.lowerBound?.toString(), p.upperBound?.toString()])).toEqual([
      ["alpha", "beta"],
    ]);
    expect(now.entries).toHaveLength(3);
  });
});

describe("commitReplace appending files", () => {
  /** partition_integer as Spark created it, before its first write: metadata v1, no snapshot. */
  async function openEmpty(name: string) {
    const dir = await copyIcebergFixture("partition_integer", join(scratch, name));
    const files = (await readSnapshotFiles(new FileStore(dir), await loadIcebergTable(new FileStore(dir))))
      .entries;
    await rm(join(dir, "metadata/v2.metadata.json"));
    await writeFile(join(dir, "metadata/version-hint.text"), "1");
    const store = new FileStore(dir);
    return { dir, store, table: await loadIcebergTable(store), files };
  }

  it("commits the first snapshot of a table without one as an append with no parent", async () => {
    const { dir, store, table, files } = await openEmpty("first-append");
    expect(table.metadata.currentSnapshotId).toBeNull();
    const added = await Promise.all(
      files.map((e) =>
        newDataFile(dir, keyOf(e), table, new Map([[1000, e.partitionById.get(1000)]]), ["user_id"]),
      ),
    );
    const outcome = committed(
      await commitReplace(store, table, { base: null, removed: [], added, summary: {}, nowMs: Date.now() }),
    );
    expect(outcome).toMatchObject({
      metadataKey: "metadata/v2.metadata.json",
      version: 2,
      sequenceNumber: 1,
    });

    const after = await loadIcebergTable(store);
    expect(after.metadata.refs.main?.snapshotId).toBe(outcome.snapshotId);
    const now = await readSnapshotFiles(store, after);
    expect(now.snapshot.parentSnapshotId).toBeNull();
    expect(
      now.entries.map((e) => [e.key, e.status, e.dataSequenceNumber, e.partitionById.get(1000)]),
    ).toEqual(files.map((e) => [keyOf(e), "added", 1, e.partitionById.get(1000)]));
    expect(now.snapshot.summary).toMatchObject({
      operation: "append",
      "added-data-files": "2",
      "deleted-data-files": "0",
      "added-records": "2",
      "changed-partition-count": "2",
      "total-records": "2",
      "total-data-files": "2",
    });
    const json = JSON.parse(await readFile(join(dir, outcome.metadataKey), "utf8"));
    expect("parent-snapshot-id" in json.snapshots[0]).toBe(false);
    const validate = await restSchema("TableMetadata");
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    const list = await avro(dir, (now.snapshot.manifestList ?? "").slice(after.metadata.location.length + 1));
    expect(list.meta["parent-snapshot-id"]?.toString()).toBe("null");
    expect(
      (
        await rowsAndSum(
          now.entries.map((e) => join(dir, keyOf(e))),
          "user_id",
        )
      )[0],
    ).toBe(2);
  });

  it("refuses to remove files from a table without a snapshot, or to ignore a snapshot the table has", async () => {
    const { dir, store, table, files } = await openEmpty("first-refused");
    const before = await readdir(join(dir, "metadata"));
    const removing = commitReplace(store, table, {
      base: null,
      removed: files,
      added: [],
      summary: {},
      nowMs: 1,
    });
    await expect(removing).rejects.toThrow(/can't be removed: the table has no snapshot yet/);
    expect(await readdir(join(dir, "metadata"))).toEqual(before);

    const full = await open("partition_integer", "first-refused-full");
    const [live] = full.base.entries;
    const key = "data/partition_col=42/copy.parquet";
    await mergeFiles(full.dir, [keyOf(live as ManifestEntry)], key, currentSchema(full.table));
    const file = await newDataFile(full.dir, key, full.table, new Map([[1000, 42]]), []);
    const ignoring = commitReplace(full.store, full.table, {
      base: null,
      removed: [],
      added: [file],
      summary: {},
      nowMs: 1,
    });
    await expect(ignoring).rejects.toThrow(
      /planned for a table without snapshots, but the table's current snapshot is/,
    );
  });

  it("appends a file to a table with a snapshot, listing its manifests again unchanged", async () => {
    const { dir, store, table, base } = await open("partition_integer", "append");
    const in42 = base.entries.find((e) => e.partitionById.get(1000) === 42) as ManifestEntry;
    const key = "data/partition_col=42/appended.parquet";
    await mergeFiles(dir, [keyOf(in42)], key, currentSchema(table));
    const file = await newDataFile(dir, key, table, new Map([[1000, 42]]), ["user_id"]);
    const outcome = committed(
      await commitReplace(store, table, { base, removed: [], added: [file], summary: {}, nowMs: Date.now() }),
    );
    const after = await loadIcebergTable(store);
    const now = await readSnapshotFiles(store, after);
    expect(now.snapshot.parentSnapshotId).toBe(base.snapshot.snapshotId);
    expect(now.snapshot.summary).toMatchObject({
      operation: "append",
      "added-data-files": "1",
      "deleted-data-files": "0",
      "deleted-records": "0",
      "changed-partition-count": "1",
      "total-data-files": "3",
      "total-records": "3",
    });
    expect(now.manifests.slice(1)).toEqual(base.manifests);
    expect(now.entries.map((e) => [e.key, e.status, e.snapshotId])).toEqual([
      [key, "added", outcome.snapshotId],
      ...base.entries.map((e) => [keyOf(e), e.status, e.snapshotId]),
    ]);
  });
});
