/**
 * Crunch of an Iceberg table that a REST catalog tracks: the agent loads the table from the
 * catalog and commits through it (the loopback catalog of `support/rest-catalog.ts`, whose every
 * answer is validated against the published OpenAPI description). A concurrent commit makes the
 * catalog answer 409 and the crunch re-plans on top of it; a commit the catalog applied but
 * answered 500 for is recognised as applied, once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CrunchPayload } from "@lakesmith/shared/jobs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCrunch } from "../src/crunch/run.ts";
import { parseJson, stringifyJson } from "../src/iceberg/index.ts";
import { RestCatalogClient } from "../src/iceberg/rest/index.ts";
import { FileStore } from "../src/store/index.ts";
import { copyIcebergFixture } from "./support/iceberg.ts";
import { jobContext } from "./support/maintenance.ts";
import { type RestCatalogServer, startRestCatalog } from "./support/rest-catalog.ts";

const root = mkdtempSync(join(tmpdir(), "iceberg-rest-crunch-"));
let catalog: RestCatalogServer;
const CLIENT = { client_id: "agent", client_secret: "s3cret-agent" };

beforeAll(async () => {
  catalog = await startRestCatalog({ clients: { [CLIENT.client_id]: CLIENT.client_secret } });
});
afterEach(() => expect(catalog.validationErrors).toEqual([]));
afterAll(async () => {
  await catalog?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A copy of lineitem registered in the catalog as `tpch.<name>`; its folder and payload. */
async function catalogTable(name: string) {
  const dir = await copyIcebergFixture("iceberg/lineitem_iceberg", join(root, name));
  const metadata = parseJson(await readFile(join(dir, "metadata/v2.metadata.json"), "utf8"));
  await catalog.tables.register(["tpch"], name, { metadata: metadata as never, folder: dir });
  const payload: CrunchPayload = {
    table_id: `tbl_${name}`,
    uri: `file://${dir}`,
    format: "iceberg",
    catalog: { type: "iceberg_rest", uri: catalog.uri, namespace: ["tpch"], table: name, ...CLIENT },
  };
  return { dir, payload, store: new FileStore(dir) };
}

const client = () =>
  new RestCatalogClient({
    uri: catalog.uri,
    auth: { clientId: CLIENT.client_id, clientSecret: CLIENT.client_secret },
  });

describe("Iceberg crunch through a REST catalog", () => {
  it("loads the table from the catalog and commits a replace snapshot through it", async () => {
    const { payload, store } = await catalogTable("lineitem");
    const ctx = jobContext(root, "crunch", payload);
    const result = await runCrunch("crunch", ctx, { store, memoryLimitMb: 256 });
    expect(result).toMatchObject({ rows_in: 51_793, rows_out: 51_793, files_after: 1 });
    const { metadata } = await client().loadTable(["tpch"], "lineitem");
    const current = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
    expect(current?.summary).toMatchObject({ operation: "replace", "lakesmith.job-id": ctx.job.id });
    expect(result.committed_version).toBe(metadata.lastSequenceNumber);
    const commits = catalog.calls.filter((c) => c.operation === "updateTable");
    expect(commits.map((c) => c.status)).toEqual([200]);
    expect(JSON.stringify(catalog.calls)).not.toContain(CLIENT.client_secret);
  });

  it("re-plans on top of a commit another writer made meanwhile (409), and loses none of its rows", async () => {
    const { payload, store } = await catalogTable("contended");
    // Another writer moves main on to a snapshot that keeps the same files, just before our commit.
    const before = await client().loadTable(["tpch"], "contended");
    const other = structuredClone(before.metadata.raw) as Record<string, unknown>;
    const snapshots = other.snapshots as Record<string, unknown>[];
    const head = snapshots.find((s) => s["snapshot-id"] === before.metadata.currentSnapshotId) as Record<
      string,
      unknown
    >;
    const theirs = {
      ...head,
      "snapshot-id": 77n,
      "parent-snapshot-id": head["snapshot-id"],
      "sequence-number": 3,
      summary: { operation: "append" },
    };
    // Another writer's commit lands just before the crunch's own.
    catalog.failNext({
      operation: "updateTable",
      before: async () => {
        const res = await client().commitTable(["tpch"], "contended", {
          requirements: [],
          updates: [
            { action: "add-snapshot", snapshot: theirs as never },
            { action: "set-snapshot-ref", "ref-name": "main", type: "branch", "snapshot-id": 77n },
          ],
        });
        expect(res.ok).toBe(true);
      },
    });
    const result = await runCrunch("crunch", jobContext(root, "crunch", payload), {
      store,
      memoryLimitMb: 256,
    });
    expect(result.rows_out).toBe(51_793);
    const statuses = catalog.calls.filter((c) => c.path.includes("/tables/contended") && c.method === "POST");
    // In order of arrival: the crunch's commit (409: the other writer's, sent while it waited,
    // landed first), the other writer's, the crunch's re-planned commit.
    expect(statuses.map((c) => c.status)).toEqual([409, 200, 200]);
    const { metadata } = await client().loadTable(["tpch"], "contended");
    const current = metadata.snapshots.find((s) => s.snapshotId === metadata.currentSnapshotId);
    expect(current?.parentSnapshotId).toBe(77n);
    expect(stringifyJson(current?.summary)).toContain("replace");
  });

  it("recognises a commit the catalog applied but answered 500 for, and commits it once", async () => {
    const { payload, store } = await catalogTable("lost-answer");
    catalog.failNext({ status: 500, afterApply: true });
    const result = await runCrunch("crunch", jobContext(root, "crunch", payload), {
      store,
      memoryLimitMb: 256,
    });
    expect(result.rows_out).toBe(51_793);
    const { metadata } = await client().loadTable(["tpch"], "lost-answer");
    const ours = metadata.snapshots.filter((s) => s.summary.operation === "replace");
    expect(ours).toHaveLength(1);
    expect(metadata.currentSnapshotId).toBe(ours[0]?.snapshotId);
    const statuses = catalog.calls.filter(
      (c) => c.path.includes("/tables/lost-answer") && c.method === "POST",
    );
    expect(statuses.map((c) => c.status)).toEqual([500]);
  });
});
