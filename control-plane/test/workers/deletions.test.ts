// Vacuum, partition expiration, recover and hard-delete through the Worker build, on D1, with an
// agent on a real WebSocket: the set-based statements of the finish hooks and of hard-delete
// (INSERT ... SELECT from json_each, UPDATE ... FROM, the settings subquery, the partial unique
// index) run inside D1 batches, where drizzle must bind their parameters.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json } from "./support/client.ts";

/** An agent that answers each offer of a job with `answer(kind, payload)`. */
const agent = (answer: (kind: string, payload: Json) => Json) =>
  answeringAgent(
    "workerd-deleter",
    {
      kinds: ["vacuum", "partition_expiration", "recover", "hard_delete"],
      capabilities: ["s3"],
      allow: ["s3://lake"],
    },
    answer,
  );

const waitForJob = ended;

const file = (date: string) => ({
  path: `event_date=${date}/part-0.parquet`,
  size: 900,
  partition_values: { event_date: date },
  modification_time: 1_700_000_000_000,
  stats: null,
  tags: null,
});

function answer(kind: string, payload: Json): Json {
  const now = Date.now();
  if (kind === "vacuum") {
    const files =
      payload.format === "iceberg"
        ? [{ path: "data/expired.parquet", size: 300, reason: "expired_snapshot", removed_at: now - 9e8 }]
        : [
            { path: "old/a.parquet", size: 100, reason: "tombstone", removed_at: now - 9e8 },
            { path: "old/b.parquet", size: 200, reason: "tombstone", removed_at: now - 9e8 },
          ];
    return {
      mode: payload.mode,
      dry_run: payload.dry_run,
      table_version: 3,
      retention_hours: 168,
      table_retention_hours: 168,
      retention_shortened: false,
      orphan_min_age_hours: 72,
      files,
      files_count: files.length,
      bytes: files.reduce((n, f) => n + f.size, 0),
      kept: {},
      objects_listed: 5,
      duration_ms: 10,
    };
  }
  if (kind === "partition_expiration")
    return {
      dry_run: false,
      validate: false,
      can_run: true,
      reason: null,
      table_version: 3,
      partition_column: "event_date",
      retention_days: payload.retention_days,
      cutoff_date: "2026-01-01",
      partitions: [
        { partition: "event_date=2025-12-01", value: "2025-12-01", files: 1, bytes: 900, rows: 10 },
      ],
      files: [file("2025-12-01")],
      files_count: 1,
      bytes: 900,
      committed_version: 4,
      committed_at: now - 1000,
      table_retention_hours: 0,
      duration_ms: 10,
    };
  if (kind === "recover")
    return {
      committed_version: 5,
      files: payload.files.map((f: Json) => ({
        deletion_id: f.deletion_id,
        path: f.path,
        outcome: "restored",
      })),
      duration_ms: 5,
    };
  return {
    table_version: 5,
    files: payload.files.map((f: Json) => ({ ...f, outcome: "deleted", detail: null })),
    deleted: payload.files.length,
    retained: 0,
    failed: 0,
    duration_ms: 5,
  };
}

describe("deleting data in workerd", () => {
  it("records a vacuum's and an expiration's files, recovers, and hard-deletes through an agent", async () => {
    await json("/api/v1/config", { method: "PUT", body: { pending_deletion_grace_hours: 0 } });
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "workerd.deletions", uri: "s3://lake/deletions", format: "delta" } },
      201,
    );
    const recipe = {
      partition_columns: ["event_date"],
      partition_pattern: "event_date=YYYY-MM-DD",
      date_filter_column: "event_date",
      cluster_columns: [],
      enumerated_columns: [],
    };
    await env.DB.prepare("update tables set onboarding_status = 'active', recipe = ? where id = ?")
      .bind(JSON.stringify(recipe), table.id)
      .run();
    const { ws } = await agent(answer);

    const vacuum = await json(`/api/v1/tables/${table.id}/vacuum`, { method: "POST", body: {} }, 202);
    await waitForJob(vacuum.id);
    const vacuumed = await json(`/api/v1/pending-deletions?source_job_id=${vacuum.id}`);
    expect(vacuumed.items.map((r: Json) => [r.path, r.status]).sort()).toEqual([
      ["old/a.parquet", "PENDING_DELETE"],
      ["old/b.parquet", "PENDING_DELETE"],
    ]);
    const stored = await json(`/api/v1/jobs/${vacuum.id}`);
    expect(stored.result).toMatchObject({ files: [], pending_deletions_recorded: 2 });
    const kept = vacuumed.items.find((r: Json) => r.path === "old/a.parquet");
    expect(
      (
        await json(`/api/v1/pending-deletions/${kept.id}/recover`, {
          method: "POST",
          body: { reason: "audit" },
        })
      ).status,
    ).toBe("RECOVERED");

    const expiration = await json(
      `/api/v1/tables/${table.id}/partition-expiration`,
      { method: "POST", body: {} },
      202,
    );
    await waitForJob(expiration.id);
    const [expired] = (await json(`/api/v1/pending-deletions?source_job_id=${expiration.id}`)).items;
    expect(expired).toMatchObject({ partition: "event_date=2025-12-01", reason: "expired_partition" });
    const recovering = await json(
      `/api/v1/pending-deletions/${expired.id}/recover`,
      { method: "POST", body: { reason: "still queried" } },
      202,
    );
    await waitForJob(recovering.recover_job_id);
    expect((await json(`/api/v1/pending-deletions/${expired.id}`)).status).toBe("RECOVERED");

    // A second vacuum proposes the same files: the recovered path is kept, the pending one not doubled.
    const again = await json(`/api/v1/tables/${table.id}/vacuum`, { method: "POST", body: {} }, 202);
    await waitForJob(again.id);
    expect((await json(`/api/v1/pending-deletions?source_job_id=${again.id}`)).total).toBe(0);

    const preview = await json(`/api/v1/vacuum/hard-delete?dry_run=true&table_id=${table.id}`, {
      method: "POST",
    });
    expect(preview.items.map((r: Json) => r.path)).toEqual(["old/b.parquet"]);
    const hard = await json(`/api/v1/vacuum/hard-delete?table_id=${table.id}`, { method: "POST" }, 202);
    expect(hard.items.map((r: Json) => r.id)).toEqual(preview.items.map((r: Json) => r.id));
    await waitForJob(hard.jobs[0].id);
    const deleted = await json(`/api/v1/pending-deletions/${preview.items[0].id}`);
    expect(deleted).toMatchObject({ status: "DELETED", hard_delete_job_id: hard.jobs[0].id });
    const stats = await json(`/api/v1/pending-deletions/stats?table_id=${table.id}`);
    expect(stats.counts).toMatchObject({ DELETED: 1, RECOVERED: 2, PENDING_DELETE: 0 });
    ws.close();
  }, 60_000);

  it("records an Iceberg vacuum's expired-snapshot files, and refuses partition expiration on it with 422", async () => {
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "workerd.iceberg", uri: "s3://lake/iceberg", format: "iceberg" } },
      201,
    );
    await env.DB.prepare("update tables set onboarding_status = 'active' where id = ?").bind(table.id).run();
    const { ws } = await agent(answer);
    const vacuum = await json(`/api/v1/tables/${table.id}/vacuum`, { method: "POST", body: {} }, 202);
    await waitForJob(vacuum.id);
    const recorded = await json(`/api/v1/pending-deletions?source_job_id=${vacuum.id}`);
    expect(recorded.items.map((r: Json) => [r.path, r.reason, r.action_type, r.vacuum_mode])).toEqual([
      ["data/expired.parquet", "expired_snapshot", "vacuum", "lite"],
    ]);
    const expiration = await json(
      `/api/v1/tables/${table.id}/partition-expiration`,
      { method: "POST", body: {} },
      422,
    );
    expect(JSON.stringify(expiration)).toContain("format");
    ws.close();
  }, 60_000);
});
