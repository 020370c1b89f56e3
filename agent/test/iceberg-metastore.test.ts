/**
 * An Iceberg table registered in a Hive Metastore (as Iceberg's HiveCatalog registers it) crunched
 * through the metastore: the metadata is read from `metadata_location`, the commit writes the next
 * `NNNNN-<uuid>.metadata.json` and swaps `metadata_location` under the table's lock, comparing it
 * with the file the crunch planned against; a writer that swapped it first makes the crunch reload
 * and commit on top of it. Against the loopback Thrift metastore.
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload, HiveMetastoreTableRef } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCrunch } from "../src/crunch/run.ts";
import { findMetadataKey, loadIcebergTable } from "../src/iceberg/index.ts";
import { runInspection } from "../src/inspect/run.ts";
import { FileStore } from "../src/store/index.ts";
import { HiveMetastoreServer } from "./support/hive-metastore.ts";
import { copyIcebergFixture } from "./support/iceberg.ts";
import { jobContext } from "./support/maintenance.ts";

let root: string;
let metastore: HiveMetastoreServer;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "iceberg-hms-"));
  metastore = await HiveMetastoreServer.start();
  metastore.addDatabase("lake");
});
afterAll(async () => {
  await metastore?.stop();
  await rm(root, { recursive: true, force: true });
});

async function registered(name: string) {
  const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, name));
  const store = new FileStore(dir);
  const metadataLocation = `file:${dir}/${await findMetadataKey(store)}`;
  metastore.registerIcebergTable({ db: "lake", name, location: `file:${dir}`, metadataLocation });
  const catalog: HiveMetastoreTableRef = {
    type: "hive_metastore",
    uri: metastore.uri,
    database: "lake",
    table: name,
  };
  const payload: CrunchPayload = {
    table_id: "tbl_ice_hms",
    uri: `file://${dir}`,
    format: "iceberg",
    catalog,
  };
  return { dir, store, payload, metadataLocation };
}

const metadataLocationOf = (name: string) =>
  metastore.table("lake", name)?.parameters.metadata_location ?? "";

describe("Iceberg tables in a Hive Metastore", () => {
  it("onboards and crunches through the metastore: the next metadata file, swapped in under the lock", async () => {
    const t = await registered("lineitem");
    await runInspection(jobContext(root, "onboarding", t.payload), { store: t.store, memoryLimitMb: 256 });
    const locks = metastore.callsOf("lock").length;
    const result = await runCrunch("crunch", jobContext(root, "crunch", t.payload), {
      store: t.store,
      memoryLimitMb: 256,
    });
    expect(result).toMatchObject({ rows_in: 51_793, rows_out: 51_793, files_after: 1 });
    expect(result.committed_version).toBe(result.table_version_before + 1);
    expect(metastore.callsOf("lock").length).toBe(locks + 1);

    const now = metadataLocationOf("lineitem");
    expect(now).toMatch(new RegExp(`^file:${t.dir}/metadata/\\d{5}-[0-9a-f-]{36}\\.metadata\\.json$`));
    expect(metastore.table("lake", "lineitem")?.parameters.previous_metadata_location).toBe(
      t.metadataLocation,
    );
    const after = await loadIcebergTable(t.store, { metadataLocation: now.slice(`file:${t.dir}/`.length) });
    expect(after.metadata.snapshots.at(-1)?.summary).toMatchObject({
      operation: "replace",
      "added-records": "51793",
    });
  });

  it("loses the swap to a writer that moved metadata_location first, reloads and commits on top of it", async () => {
    const t = await registered("contended");
    const winner = join(t.dir, "metadata", "00042-winner.metadata.json");
    let moved = false;
    const undo = metastore.before("lock", async () => {
      if (moved) return;
      moved = true;
      await copyFile(t.metadataLocation.replace(/^file:/, ""), winner);
      const table = metastore.table("lake", "contended");
      if (table) table.parameters.metadata_location = `file:${winner}`;
    });
    try {
      const result = await runCrunch("crunch", jobContext(root, "crunch", t.payload), {
        store: t.store,
        memoryLimitMb: 256,
      });
      expect(moved).toBe(true);
      expect(result.committed_version).not.toBeNull();
      expect(metastore.table("lake", "contended")?.parameters.previous_metadata_location).toBe(
        `file:${winner}`,
      );
      expect(metadataLocationOf("contended")).toMatch(/\/metadata\/00043-[0-9a-f-]{36}\.metadata\.json$/);
    } finally {
      undo();
    }
  });

  it("speaks the framed transport when the reference says so", async () => {
    const framed = await HiveMetastoreServer.start({ transport: "framed" });
    try {
      framed.addDatabase("lake");
      const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, "framed"));
      const store = new FileStore(dir);
      framed.registerIcebergTable({
        db: "lake",
        name: "framed",
        location: `file:${dir}`,
        metadataLocation: `file:${dir}/${await findMetadataKey(store)}`,
      });
      const catalog: HiveMetastoreTableRef = {
        type: "hive_metastore",
        uri: framed.uri,
        database: "lake",
        table: "framed",
        transport: "framed",
      };
      const payload: CrunchPayload = {
        table_id: "tbl_framed",
        uri: `file://${dir}`,
        format: "iceberg",
        catalog,
      };
      const recipe = await runInspection(jobContext(root, "onboarding", payload), {
        store,
        memoryLimitMb: 256,
      });
      expect(recipe.partition_columns).toEqual([]);
      expect(framed.callsOf("get_table").length).toBeGreaterThan(0);
    } finally {
      await framed.stop();
    }
  });

  it("refuses a Hive table's reference for an Iceberg job, naming the table", async () => {
    const t = await registered("plain");
    const table = metastore.table("lake", "plain");
    if (table) table.parameters = { ...table.parameters, table_type: "HIVE" };
    await expect(
      runCrunch("crunch", jobContext(root, "crunch", t.payload), { store: t.store, memoryLimitMb: 256 }),
    ).rejects.toThrow(/lake\.plain is not an Iceberg table in the metastore/);
  });
});
