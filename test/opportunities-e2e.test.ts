/**
 * Table opportunities end to end, through the public API and a `lakesmith-agent` child process: a
 * generated Delta table of many small snappy files on `file://` is measured by the agent (potential
 * DRR from its sample rewrite, every file small), crunched through the API, and measured again: the
 * opportunities change with the data, and the scans leave the table as they found it.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEventsTable } from "./support/delta-tables.ts";
import { type LakeSuite, startLakeSuite } from "./support/lake-suite.ts";

const root = mkdtempSync(join(tmpdir(), "opportunities-e2e-"));
let suite: LakeSuite;
beforeAll(async () => {
  suite = await startLakeSuite(root, "opportunities-agent");
}, 60_000);
afterAll(() => suite?.stop());

/** Every file under the table's folder, log included. */
const listing = (path: string) => readdirSync(path, { recursive: true, encoding: "utf8" }).sort();

async function scan(tableId: string) {
  const { plane } = suite;
  const queued = await plane.api("POST", `/api/v1/tables/${tableId}/opportunities:scan`);
  expect(queued.status, JSON.stringify(queued.body)).toBe(202);
  const done = await plane.waitForJob(queued.body.job_id, ["succeeded", "failed"], 90_000);
  expect(done.status, done.error ?? "").toBe("succeeded");
  const view = await plane.api("GET", `/api/v1/tables/${tableId}/opportunities`);
  expect(view.status).toBe(200);
  expect(view.body).toMatchObject({
    status: "measured",
    scan: null,
    measurement: { job_id: queued.body.job_id },
  });
  return view.body.measurement;
}

describe("opportunities end to end", () => {
  it("measures a table of small files, and measures it again after a crunch changed it", async () => {
    const { plane } = suite;
    const path = join(root, "events");
    await writeEventsTable(path, { days: 2, filesPerDay: 24, rowsPerFile: 12_000 });
    const created = await plane.api("POST", "/api/v1/tables", {
      name: "shop.events",
      uri: `file://${path}`,
      format: "delta",
      target_file_size_mb: 1,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const tableId = created.body.id as string;
    const onboarded = await plane.waitForJob(created.body.onboarding_job_id, ["succeeded", "failed"], 60_000);
    expect(onboarded.status, onboarded.error ?? "").toBe("succeeded");
    const recipe = (await plane.api("GET", `/api/v1/tables/${tableId}`)).body.recipe;
    expect((await plane.api("GET", `/api/v1/tables/${tableId}/opportunities`)).body.status).toBe(
      "not_measured",
    );

    const untouched = listing(path);
    const before = await scan(tableId);
    expect(listing(path)).toEqual(untouched);
    expect(before).toMatchObject({ table_version: 0, files: 48, small_files: 48, small_file_share: 1 });
    expect(before.potential_drr_percent).toBeGreaterThan(0);
    expect(before.method).toMatch(/^rewrite of 16 sampled files/);
    // Onboarding picks cluster columns for this table; the generated files are not in their order.
    expect(recipe.cluster_columns.length).toBeGreaterThan(0);
    expect(before.ordering).toMatchObject({
      columns: recipe.cluster_columns,
      source: "recipe",
      files_sorted: 0,
    });
    expect(before).toMatchObject({ missing_ordering: true, suggested_columns: recipe.cluster_columns });

    const crunch = await plane.api("POST", `/api/v1/tables/${tableId}/crunch`, { whole_table: true });
    expect(crunch.status, JSON.stringify(crunch.body)).toBe(202);
    const crunched = await plane.waitForJob(crunch.body.id, ["succeeded", "failed"], 90_000);
    expect(crunched.status, crunched.error ?? "").toBe("succeeded");

    const after = await scan(tableId);
    expect(after.table_version).toBe(1);
    expect(after.files).toBeLessThan(before.files);
    expect(after.small_file_share).toBeLessThan(before.small_file_share);
    expect(after.crunch_candidates).toBe(0);
    expect(after.potential_drr_percent).toBe(0);
    expect(after.ordering.files_sorted).toBe(after.ordering.files_checked);
    expect(after.missing_ordering).toBe(false);
  }, 180_000);
});
