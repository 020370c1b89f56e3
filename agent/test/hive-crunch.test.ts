/**
 * Hive tables through the agent's jobs against a loopback metastore (a real Thrift server):
 * onboarding reads the partitions from the metastore; crunch rewrites each partition into a new
 * folder and moves it there in the metastore under the table's lock; the rows read from the new
 * locations equal the rows before; a file that lands in a partition during the crunch is not lost;
 * a retried job reports its earlier commit; recover moves the partitions back; tables that are
 * not Parquet, or transactional, are refused with the reason. On `file://` and on S3.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload, CrunchResult, HiveMetastoreTableRef } from "@lakesmith/shared/jobs";
import type { RecoverPayload } from "@lakesmith/shared/maintenance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCrunch } from "../src/crunch/run.ts";
import { checksumFiles, compareChecksums, Engine } from "../src/engine/index.ts";
import { runInspection } from "../src/inspect/run.ts";
import { runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runRecover } from "../src/maintenance/recover.ts";
import { FileStore, localPaths, type ObjectStore, storeFor } from "../src/store/index.ts";
import { HiveMetastoreServer } from "./support/hive-metastore.ts";
import { HIVE_COLUMNS, writeHiveFile, writeHiveTable } from "./support/hive-tables.ts";
import { type LocalS3, startS3rver, uploadFolder } from "./support/local-s3.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "hive-crunch-"));
let metastore: HiveMetastoreServer;
let s3: LocalS3;
let seq = 0;

beforeAll(async () => {
  metastore = await HiveMetastoreServer.start();
  metastore.addDatabase("lake");
  s3 = await startS3rver();
});
afterAll(async () => {
  await metastore?.stop();
  await s3?.close();
  rmSync(root, { recursive: true, force: true });
});

const ref = (table: string): HiveMetastoreTableRef => ({
  type: "hive_metastore",
  uri: metastore.uri,
  database: "lake",
  table,
});

const payloadFor = (uri: string, table: string, extra: Partial<CrunchPayload> = {}): CrunchPayload => ({
  table_id: "tbl_hive",
  uri,
  format: "hive",
  catalog: ref(table),
  ...extra,
});

/** A partitioned table on `file://` registered in the metastore. */
async function fileTable(partitions = ["2026-01-01", "2026-01-02", "2026-01-03"]) {
  const name = `events${++seq}`;
  const dir = join(root, name);
  const written = await writeHiveTable(dir, { partitions, filesPerPartition: 4 });
  metastore.registerParquetTable(
    { db: "lake", name, location: `file://${dir}`, ...written.spec },
    written.partitions,
  );
  return { name, dir, uri: `file://${dir}`, store: new FileStore(dir) as ObjectStore, written };
}

/** Each partition's (or the table's) rows, as a checksum of the files at its metastore location. */
async function rowsByLocation(store: ObjectStore, name: string) {
  const entry = metastore.tables.get(`lake.${name}`);
  if (!entry) throw new Error(`no table ${name}`);
  const folders =
    entry.partitions.size === 0
      ? [["", entry.table.sd.location] as const]
      : [...entry.partitions].map(([p, partition]) => [p, partition.sd.location] as const);
  const engine = await Engine.open();
  const scratch = mkdtempSync(join(root, "read-"));
  try {
    const sums = new Map<string, Awaited<ReturnType<typeof checksumFiles>>>();
    for (const [partition, location] of folders) {
      const prefix = keyUnder(store, location);
      const keys: string[] = [];
      for await (const o of store.list(prefix ? `${prefix}/` : "")) {
        const rest = o.key.slice(prefix ? prefix.length + 1 : 0);
        if (!rest.includes("/") && !rest.startsWith("_") && !rest.startsWith(".")) keys.push(o.key);
      }
      const paths = await localPaths(
        store,
        keys,
        join(scratch, String(sums.size)),
        new AbortController().signal,
      );
      sums.set(
        partition,
        await checksumFiles(
          engine,
          paths,
          HIVE_COLUMNS.map((c) => ({
            name: c.name,
            type:
              { bigint: "BIGINT", string: "VARCHAR" }[c.type] ??
              (c.type === "decimal(12,2)" ? "DECIMAL(12,2)" : "VARCHAR[]"),
          })),
        ),
      );
    }
    return sums;
  } finally {
    engine.close();
  }
}

function keyUnder(store: ObjectStore, location: string): string {
  const rootUri = store.uri.replace(/\/$/, "");
  const at = location
    .replace(/^file:\/*(?=[^/])/, "file:///")
    .replace(/^s3[an]:\/\//, "s3://")
    .replace(/\/$/, "");
  if (at === rootUri) return "";
  if (!at.startsWith(`${rootUri}/`)) throw new Error(`${location} is not under ${store.uri}`);
  return at.slice(rootUri.length + 1);
}

function expectSameRows(
  before: Map<string, Awaited<ReturnType<typeof checksumFiles>>>,
  after: Map<string, Awaited<ReturnType<typeof checksumFiles>>>,
) {
  expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
  for (const [key, sum] of before) expect(compareChecksums(sum, after.get(key) ?? sum), key).toEqual([]);
  for (const [key, sum] of before) expect(after.get(key)?.rows, key).toBe(sum.rows);
}

const crunch = (payload: CrunchPayload, store: ObjectStore, jobId?: string) =>
  runCrunch("crunch", jobContext(root, "crunch", payload, { jobId }), { store, memoryLimitMb: 256 });

const recoverPayload = (uri: string, name: string, result: CrunchResult): RecoverPayload => ({
  table_id: "tbl_hive",
  uri,
  format: "hive",
  files: [],
  folders: (result.superseded ?? []).map((s, i) => ({
    values: s.values,
    previous_location: s.previous_location,
    location: s.location,
    deletion_ids: s.files.map((_, j) => `del_${i}_${j}`),
    paths: s.files.map((f) => f.path),
  })),
  catalog: ref(name),
});

describe("Hive crunch through the metastore", () => {
  it("onboards a partitioned table: partition column, date filter, the metastore's types", async () => {
    const t = await fileTable();
    const recipe = await runInspection(
      jobContext(root, "onboarding", {
        table_id: "tbl_hive",
        uri: t.uri,
        format: "hive" as const,
        catalog: ref(t.name),
      }),
      { store: t.store, memoryLimitMb: 256 },
    );
    expect(recipe.partition_columns).toEqual(["dt"]);
    expect(recipe.partition_pattern).toContain("dt=");
  });

  it("crunches every partition into its own new folder, moves them in one alter under the lock, same rows; a retry reports the commit", async () => {
    const t = await fileTable();
    const before = await rowsByLocation(t.store, t.name);
    const oldLocations = [...(metastore.tables.get(`lake.${t.name}`)?.partitions.values() ?? [])].map(
      (p) => p.sd.location,
    );
    const lockCalls = metastore.callsOf("lock").length;

    const result = await crunch(payloadFor(t.uri, t.name), t.store, `job_hive_${t.name}`);
    expect(result).toMatchObject({
      job_type: "crunch",
      rows_in: 2400,
      rows_out: 2400,
      partitions_crunched: 3,
    });
    expect(result.committed_version).toBeGreaterThan(result.table_version_before);
    expect(result.superseded).toHaveLength(3);
    for (const s of result.superseded ?? []) {
      expect(s.files).toHaveLength(4);
      expect(oldLocations).toContain(s.previous_location);
      expect(s.location).toMatch(new RegExp(`^file://${t.dir}/_lakesmith/[^/]+/dt=2026-01-0\\d$`));
    }
    // One lock, one alter_partitions with all three partitions.
    expect(metastore.callsOf("lock").length).toBe(lockCalls + 1);
    const alters = metastore.callsOf("alter_partitions").filter((args) => args[1] === t.name);
    expect(alters).toHaveLength(1);
    expect(alters[0]?.[2]).toHaveLength(3);
    const partition = metastore.partition("lake", t.name, "dt=2026-01-01");
    expect(partition?.parameters).toMatchObject({
      "lakesmith.job_id": `job_hive_${t.name}`,
      "lakesmith.previous_location": `file://${t.dir}/dt=2026-01-01`,
      numFiles: "1",
    });

    expectSameRows(before, await rowsByLocation(t.store, t.name));
    // Nothing deleted: the old folders are whole.
    expect((await readdir(join(t.dir, "dt=2026-01-01"))).filter((n) => n.endsWith(".parquet"))).toHaveLength(
      4,
    );

    const again = await crunch(payloadFor(t.uri, t.name), t.store, `job_hive_${t.name}`);
    const { duration_ms: _a, phases_ms: _b, ...recorded } = result;
    expect(again).toMatchObject(recorded);
    expect(metastore.callsOf("alter_partitions").filter((args) => args[1] === t.name)).toHaveLength(1);

    // Without its record the retry can't report the commit, and never commits a second time.
    const folder = (result.superseded?.[0]?.location ?? "").replace(/^file:\/\//, "");
    await rm(join(folder, "..", "_rewrite.json"));
    await expect(crunch(payloadFor(t.uri, t.name), t.store, `job_hive_${t.name}`)).rejects.toThrow(
      /already moved a partition in the metastore .* can't be read/,
    );
    expect(metastore.callsOf("alter_partitions").filter((args) => args[1] === t.name)).toHaveLength(1);
  });

  it("keeps a file that lands in a partition while the crunch runs: the move re-checks under the lock and takes it along", async () => {
    const t = await fileTable(["2026-02-01", "2026-02-02"]);
    const engine = await Engine.open();
    let appended = false;
    const undo = metastore.before("lock", async () => {
      if (appended) return;
      appended = true;
      await writeHiveFile(engine, join(t.dir, "dt=2026-02-01", "late-00000.parquet"), 1_000_000, 50);
    });
    try {
      const result = await crunch(payloadFor(t.uri, t.name), t.store);
      expect(appended).toBe(true);
      expect(result.committed_version).not.toBeNull();
      const after = await rowsByLocation(t.store, t.name);
      expect(after.get("dt=2026-02-01")?.rows).toBe(4 * 200 + 50);
      expect(after.get("dt=2026-02-02")?.rows).toBe(4 * 200);
      const moved = result.superseded?.find((s) => s.partition === "dt=2026-02-01");
      expect(moved?.files.map((f) => f.path)).toContain("dt=2026-02-01/late-00000.parquet");
    } finally {
      undo();
      engine.close();
    }
  });

  it("crunches an unpartitioned table twice: each rewrite in its own folder beside the last, never inside it", async () => {
    const name = `flat${++seq}`;
    const dir = join(root, name);
    const written = await writeHiveTable(dir, { filesPerPartition: 5 });
    metastore.registerParquetTable({ db: "lake", name, location: `file://${dir}`, ...written.spec });
    const store = new FileStore(dir);
    const before = await rowsByLocation(store, name);

    const first = await crunch(payloadFor(`file://${dir}`, name), store);
    const firstLocation = metastore.table("lake", name)?.sd.location ?? "";
    expect(firstLocation).toMatch(new RegExp(`^file://${dir}/_lakesmith/[^/]+/data$`));
    expectSameRows(before, await rowsByLocation(store, name));
    expect(first.superseded?.[0]?.previous_location).toBe(`file://${dir}`);

    // A second crunch (optimize: nothing to bin-pack) changes nothing; a forced crunch moves again.
    const second = await crunch(payloadFor(`file://${dir}`, name), store);
    const secondLocation = metastore.table("lake", name)?.sd.location ?? "";
    if (second.committed_version !== null) {
      expect(secondLocation).toMatch(new RegExp(`^file://${dir}/_lakesmith/[^/]+/data$`));
      expect(secondLocation).not.toBe(firstLocation);
    }
    expectSameRows(before, await rowsByLocation(store, name));
  });

  it("recovers: moves every partition back to its old folder; a second recover finds them there", async () => {
    const t = await fileTable(["2026-03-01", "2026-03-02"]);
    const before = await rowsByLocation(t.store, t.name);
    const result = await crunch(payloadFor(t.uri, t.name), t.store);
    const payload = recoverPayload(t.uri, t.name, result);

    const recovered = await runRecover(jobContext(root, "recover", payload), {
      store: t.store,
      memoryLimitMb: 256,
    });
    expect(new Set(recovered.files.map((f) => f.outcome))).toEqual(new Set(["restored"]));
    expect(recovered.files).toHaveLength(8);
    expect(metastore.partition("lake", t.name, "dt=2026-03-01")?.sd.location).toBe(
      `file://${t.dir}/dt=2026-03-01`,
    );
    expect(
      metastore.partition("lake", t.name, "dt=2026-03-01")?.parameters["lakesmith.job_id"],
    ).toBeUndefined();
    expectSameRows(before, await rowsByLocation(t.store, t.name));

    const twice = await runRecover(jobContext(root, "recover", payload), {
      store: t.store,
      memoryLimitMb: 256,
    });
    expect(new Set(twice.files.map((f) => f.outcome))).toEqual(new Set(["already_live"]));
  });

  it("hard delete removes a superseded folder's files; a recover after that fails for good naming them", async () => {
    const t = await fileTable(["2026-04-01"]);
    const result = await crunch(payloadFor(t.uri, t.name), t.store);
    const superseded = result.superseded?.[0];
    if (!superseded) throw new Error("nothing superseded");
    const deleted = await runHardDelete(
      jobContext(root, "hard_delete", {
        table_id: "tbl_hive",
        uri: t.uri,
        format: "hive" as const,
        files: superseded.files.map((f, i) => ({ deletion_id: `del_${i}`, path: f.path })),
      }),
      { store: t.store, memoryLimitMb: 256 },
    );
    expect(deleted.files.map((f) => f.outcome)).toEqual(["deleted", "deleted", "deleted", "deleted"]);
    await expect(stat(join(t.dir, superseded.files[0]?.path ?? ""))).rejects.toThrow();
    // The table still reads every row from its new folder.
    expect((await rowsByLocation(t.store, t.name)).get("dt=2026-04-01")?.rows).toBe(800);
    await expect(
      runRecover(jobContext(root, "recover", recoverPayload(t.uri, t.name, result)), {
        store: t.store,
        memoryLimitMb: 256,
      }),
    ).rejects.toThrow(/are gone/);
  });

  it("refuses a text table and a transactional table with the reason, and changes nothing", async () => {
    const text = `text${++seq}`;
    metastore.registerTextTable({ db: "lake", name: text, location: `file://${join(root, text)}` });
    const acid = `acid${++seq}`;
    metastore.registerTransactionalTable({ db: "lake", name: acid, location: `file://${join(root, acid)}` });
    const store = new FileStore(root);
    await expect(crunch(payloadFor(`file://${join(root, text)}`, text), store)).rejects.toThrow(
      /not Parquet/,
    );
    await expect(crunch(payloadFor(`file://${join(root, acid)}`, acid), store)).rejects.toThrow(
      /transactional \(ACID\)/,
    );
    expect(metastore.callsOf("alter_table").filter((a) => a[1] === text || a[1] === acid)).toEqual([]);
  });

  it("refuses a partition whose files hold a column the metastore does not declare, rather than drop it, and changes nothing", async () => {
    const t = await fileTable(["2026-01-01"]);
    const engine = await Engine.open();
    try {
      // Another writer's file with a column Hive's readers don't see (nothing declared it).
      await engine.run(
        `copy (select i::bigint as id, 'n' as name, 1.00::decimal(12,2) as amount, ['t'] as tags, 'kept?' as note
           from range(90000, 90010) r(i))
         to '${join(t.dir, "dt=2026-01-01", "part-extra.parquet")}' (format parquet)`,
      );
    } finally {
      engine.close();
    }
    const before = await rowsByLocation(t.store, t.name);
    const alters = metastore.callsOf("alter_partitions").length;
    await expect(crunch(payloadFor(t.uri, t.name), t.store)).rejects.toThrow(
      /partition 'dt=2026-01-01': its files hold a column the metastore does not declare \(note\)/,
    );
    expect(metastore.callsOf("alter_partitions").length).toBe(alters);
    expectSameRows(before, await rowsByLocation(t.store, t.name));
    expect((await readdir(join(t.dir, "dt=2026-01-01"))).sort()).toContain("part-extra.parquet");
  });

  it("refuses a table with a timestamp column: Hive before 4.0 can't read the INT64 timestamps a rewrite writes", async () => {
    const name = `stamped${++seq}`;
    const dir = join(root, name);
    const written = await writeHiveTable(dir, { partitions: ["2026-01-01"] });
    metastore.registerParquetTable(
      {
        db: "lake",
        name,
        location: `file://${dir}`,
        ...written.spec,
        columns: [...HIVE_COLUMNS, { name: "seen", type: "struct<at:timestamp>" }],
      },
      written.partitions,
    );
    await expect(crunch(payloadFor(`file://${dir}`, name), new FileStore(dir))).rejects.toThrow(
      /timestamp column seen would be rewritten as INT64/,
    );
  });

  it("crunches a partitioned table on S3 and reads back the same rows", async () => {
    const name = `s3events${++seq}`;
    const local = join(root, `${name}-local`);
    const written = await writeHiveTable(local, {
      partitions: ["2026-05-01", "2026-05-02"],
      filesPerPartition: 3,
    });
    const uri = `s3://lake/warehouse/${name}`;
    const store = storeFor(uri, { s3: s3.options });
    await uploadFolder(local, store);
    // Metastores write S3 locations as s3a://: the swap keeps the spelling.
    metastore.registerParquetTable(
      { db: "lake", name, location: `s3a://lake/warehouse/${name}`, ...written.spec },
      written.partitions,
    );
    const before = await rowsByLocation(store, name);
    const result = await crunch(payloadFor(uri, name), store);
    expect(result.partitions_crunched).toBe(2);
    expect(metastore.partition("lake", name, "dt=2026-05-01")?.sd.location).toMatch(
      new RegExp(`^s3a://lake/warehouse/${name}/_lakesmith/[^/]+/dt=2026-05-01$`),
    );
    expectSameRows(before, await rowsByLocation(store, name));
  });
});
