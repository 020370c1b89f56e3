/**
 * JSON prefix conversion end to end, through the public API and a `lakesmith-agent` child process:
 * a use-as-registered location on `file://` whose prefix's policy converts to a target prefix;
 * ad-hoc conversions read back equal through DuckDB, converted again after new files land (only
 * the new ones); the converted inputs removed as pending deletions of the prefix, one recovered,
 * the rest hard-deleted; a record that cannot be read failing the run and putting the prefix in
 * error; and one conversion on the loopback S3 server.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlList } from "../agent/src/engine/duckdb.ts";
import { readAll, S3Store } from "../agent/src/store/index.ts";
import type { LocalS3 } from "../agent/test/support/local-s3.ts";
import { routingOf } from "../control-plane/src/jobs/enqueue.ts";
import { type LakeSuite, startLakeSuite } from "./support/lake-suite.ts";
import type { TestPlane } from "./support/plane.ts";

const BASE = "/api/v1/object-maintenance";
const root = mkdtempSync(join(tmpdir(), "conversion-e2e-"));
let s3: LocalS3;
let plane: TestPlane;
let suite: LakeSuite;

beforeAll(async () => {
  suite = await startLakeSuite(root, "conversion-agent");
  ({ plane, s3 } = suite);
  const setting = await plane.api("PUT", "/api/v1/config", { pending_deletion_grace_hours: 0 });
  expect(setting.status, JSON.stringify(setting.body)).toBe(200);
}, 60_000);
afterAll(() => suite?.stop());

const ndjson = (rows: object[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

/** A registered location (skip age 0) whose one prefix converts to `target`; returns the prefix id. */
async function managedPrefix(name: string, uri: string, policy: Record<string, unknown>): Promise<string> {
  const location = await plane.api("POST", `${BASE}/locations`, { name, uri, skip_age_days: 0 });
  expect(location.status, JSON.stringify(location.body)).toBe(201);
  const [prefix] = (await plane.api("GET", `${BASE}/locations/${location.body.id}/managed-prefixes`)).body
    .items;
  const put = await plane.api("PUT", `${BASE}/prefixes/${prefix.id}/policy`, policy);
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  return prefix.id;
}

/** Posts an action and waits for its job to end; returns the run as GET .../runs shows it. */
async function act(prefixId: string, action: string) {
  const posted = await plane.api("POST", `${BASE}/prefixes/${prefixId}/actions`, { action });
  expect(posted.status, JSON.stringify(posted.body)).toBe(202);
  await plane.waitForJob(posted.body.job_id, ["succeeded", "failed"], 60_000);
  const runs = (await plane.api("GET", `${BASE}/prefixes/${prefixId}/runs`)).body.items;
  return runs.find((r: { job_id: string }) => r.job_id === posted.body.job_id);
}

async function parquetRows(files: string[]) {
  const engine = await Engine.open({ memoryLimitMb: 128 });
  try {
    return await engine.query(
      `select * from read_parquet(${sqlList(files)}, union_by_name = true) order by id`,
    );
  } finally {
    engine.close();
  }
}

describe("JSON prefix conversion end to end", () => {
  it("converts through actions, only new inputs the second time, and removes and recovers inputs through pending deletions", async () => {
    const source = join(root, "lake", "raw", "events");
    const target = join(root, "lake", "curated", "events");
    mkdirSync(source, { recursive: true });
    writeFileSync(
      join(source, "a.jsonl"),
      ndjson([
        { id: 1, kind: "click", at: "2026-01-01" },
        { id: 2, kind: "view" },
      ]),
    );
    writeFileSync(join(source, "b.json.gz"), gzipSync(JSON.stringify([{ id: 3, kind: "buy", amount: 9.5 }])));
    const prefixId = await managedPrefix("conv-file", `file://${source}`, {
      convert: { target_prefix: `file://${target}`, target_file_size_mb: 8 },
      remove_inputs: { retention_days: 0 },
    });

    const first = await act(prefixId, "convert");
    expect(first).toMatchObject({
      action: "convert",
      trigger: "action",
      status: "succeeded",
      policy_version: 1,
    });
    expect(first.metrics).toMatchObject({ files_in: 2, rows: 3, inputs_converted_before: 0 });
    expect(first.metrics.drr).toBeCloseTo(first.metrics.bytes_before / first.metrics.bytes_after);
    const manifest = JSON.parse(
      (
        await readAll((await import("node:fs")).createReadStream(join(target, "_lakesmith_manifest.json")))
      ).toString(),
    );
    const outputs = manifest.runs.flatMap((r: { outputs: { key: string }[] }) =>
      r.outputs.map((o) => join(target, o.key)),
    );
    expect((await parquetRows(outputs)).map((r) => [r.id, r.kind, r.amount])).toEqual([
      ["1", "click", null],
      ["2", "view", null],
      ["3", "buy", 9.5],
    ]);

    writeFileSync(join(source, "c.ndjson"), ndjson([{ id: 4, kind: "click" }]));
    const second = await act(prefixId, "convert");
    expect(second.metrics).toMatchObject({ files_in: 1, rows: 1, inputs_converted_before: 2 });
    const actions = (await plane.api("GET", `${BASE}/prefixes/${prefixId}/actions`)).body;
    expect(actions.items.map((a: { job_id: string }) => a.job_id)).toEqual([second.job_id, first.job_id]);

    const removal = await act(prefixId, "remove_inputs");
    expect(removal).toMatchObject({ action: "remove_inputs", status: "succeeded" });
    expect(removal.metrics.pending_deletions_recorded).toBe(3);
    const records = (await plane.api("GET", `/api/v1/pending-deletions?prefix_id=${prefixId}`)).body.items;
    expect(records.map((r: { path: string }) => r.path).sort()).toEqual(["a.jsonl", "b.json.gz", "c.ndjson"]);
    expect(
      records.every(
        (r: { table_id: null; action_type: string }) =>
          r.table_id === null && r.action_type === "remove_inputs",
      ),
    ).toBe(true);
    const kept = records.find((r: { path: string }) => r.path === "a.jsonl");
    const recovered = await plane.api("POST", `/api/v1/pending-deletions/${kept.id}/recover`, {
      reason: "audit copy",
    });
    expect(recovered.status, JSON.stringify(recovered.body)).toBe(200);
    expect(recovered.body.status).toBe("RECOVERED");
    const stats = (await plane.api("GET", `/api/v1/pending-deletions/stats?prefix_id=${prefixId}`)).body;
    expect(stats).toMatchObject({ prefix_id: prefixId, total: 3, eligible_now: 2 });
    expect(stats.counts).toMatchObject({ PENDING_DELETE: 2, RECOVERED: 1 });

    const hardDelete = await plane.api("POST", `/api/v1/vacuum/hard-delete?prefix_id=${prefixId}`);
    expect(hardDelete.status, JSON.stringify(hardDelete.body)).toBe(202);
    expect(hardDelete.body.files_by_prefix).toEqual([
      expect.objectContaining({ prefix_id: prefixId, files: 2 }),
    ]);
    // The routing columns hard-delete writes in SQL are what the kind's declaration derives.
    const queued = await plane.server.services.jobs.get(hardDelete.body.jobs[0].id);
    const derived = routingOf(plane.server.services.jobs.engine, {
      kind: "prefix_hard_delete",
      payload: queued?.payload ?? {},
    });
    expect(queued).toMatchObject({
      kind: "prefix_hard_delete",
      requires: derived.requires,
      locations: derived.locations,
      endpoints: derived.endpoints,
      exclusion: derived.exclusion,
      locks: derived.locks,
    });
    await plane.waitForJob(hardDelete.body.jobs[0].id, ["succeeded"], 60_000);
    const after = (await plane.api("GET", `/api/v1/pending-deletions?prefix_id=${prefixId}`)).body.items;
    expect(
      Object.fromEntries(after.map((r: { path: string; status: string }) => [r.path, r.status])),
    ).toEqual({
      "a.jsonl": "RECOVERED",
      "b.json.gz": "DELETED",
      "c.ndjson": "DELETED",
    });
    const { existsSync } = await import("node:fs");
    expect([existsSync(join(source, "a.jsonl")), existsSync(join(source, "b.json.gz"))]).toEqual([
      true,
      false,
    ]);
    // The recovered input is never proposed again; the Parquet still holds every row.
    const again = await act(prefixId, "remove_inputs");
    expect(again.metrics.pending_deletions_recorded).toBe(0);
    expect((await parquetRows(outputs)).length).toBe(3);
  }, 120_000);

  it("fails a conversion whose record cannot be read, naming the file and line, and puts the prefix in error", async () => {
    const source = join(root, "lake", "raw", "misfit");
    mkdirSync(source, { recursive: true });
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ id: i, n: i }));
    writeFileSync(join(source, "m.jsonl"), `${ndjson(rows)}{"id": 30000, "n": }\n`);
    const prefixId = await managedPrefix("conv-misfit", `file://${source}`, {
      convert: { target_prefix: `file://${join(root, "lake", "curated", "misfit")}` },
    });
    const run = await act(prefixId, "convert");
    expect(run.status).toBe("failed");
    expect(run.error).toContain("m.jsonl");
    expect(run.error).toContain("line 30001");
    const prefix = (await plane.api("GET", `${BASE}/prefixes/${prefixId}`)).body;
    expect(prefix.management_state).toBe("error");
    expect(prefix.state_reason).toContain("line 30001");
    const refused = await plane.api("POST", `${BASE}/prefixes/${prefixId}/actions`, { action: "convert" });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain("management_state");
  }, 120_000);

  it("converts a prefix on S3", async () => {
    const store = new S3Store("lake", "raw/s3events/", s3.options);
    await store.write(
      "a.jsonl",
      ndjson([
        { id: 1, v: "a" },
        { id: 2, v: "b" },
      ]),
    );
    const prefixId = await managedPrefix("conv-s3", "s3://lake/raw/s3events", {
      convert: { target_prefix: "s3://lake/curated/s3events" },
    });
    const run = await act(prefixId, "convert");
    expect(run.status, run.error).toBe("succeeded");
    expect(run.metrics).toMatchObject({ files_in: 1, rows: 2, files_out: 1 });
    const target = new S3Store("lake", "curated/s3events/", s3.options);
    const manifest = JSON.parse((await readAll(await target.read("_lakesmith_manifest.json"))).toString());
    const key = manifest.runs[0].outputs[0].key;
    const local = join(root, "s3-out.parquet");
    await target.download(key, local);
    expect((await parquetRows([local])).map((r) => r.v)).toEqual(["a", "b"]);
  }, 120_000);
});
