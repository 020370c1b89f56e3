// A partition expiration validate through the Worker build: the Worker holds the request while the
// AgentHub Durable Object offers the job to an agent on a real WebSocket and records its answer in
// D1; the Worker reads it there (it shares no memory with the Durable Object) and answers 200. With
// no connected agent allowed the table's location it answers 503 at once and queues nothing.
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json } from "./support/client.ts";

const RECIPE = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: [],
  enumerated_columns: [],
};

function answer(kind: string, payload: Json): Json {
  if (kind === "onboarding") return RECIPE;
  return {
    dry_run: true,
    validate: true,
    can_run: true,
    reason: null,
    table_version: 4,
    partition_column: payload.partition_column,
    retention_days: payload.retention_days,
    cutoff_date: "2026-01-01",
    partitions: [{ partition: "event_date=2025-12-01", value: "2025-12-01", files: 1, bytes: 900, rows: 10 }],
    files: [],
    files_count: 1,
    bytes: 900,
    committed_version: null,
    committed_at: null,
    table_retention_hours: 168,
    duration_ms: 3,
  };
}

describe("a partition expiration validate in workerd", () => {
  it("answers 200 with the agent's answer, read from D1 while the request waits", async () => {
    await answeringAgent(
      "workerd-validator",
      { kinds: ["onboarding", "partition_expiration"], capabilities: ["s3"], allow: ["s3://lake-v"] },
      answer,
    );
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "validate.v", uri: "s3://lake-v/events" } },
      201,
    );
    expect(await ended(table.onboarding_job_id)).toMatchObject({ status: "succeeded" });
    const answered = await json(
      `/api/v1/tables/${table.id}/partition-expiration/validate`,
      { method: "POST", body: { retention_days: 45 } },
      200,
    );
    expect(answered).toMatchObject({
      status: "succeeded",
      validate: true,
      partition_column: "event_date",
      summary: { can_run: true, files_count: 1, retention_days: 45 },
    });
  });

  it("answers 503 at once when no connected agent may read the table, and queues nothing", async () => {
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "validate.nobody", uri: "s3://lake-nobody/events" } },
      201,
    );
    const refused = await json(
      `/api/v1/tables/${table.id}/partition-expiration/validate`,
      { method: "POST", body: { partition_column: "event_date" } },
      503,
    );
    expect(refused.detail).toContain("s3://lake-nobody/events");
    const jobs = await json(`/api/v1/tables/${table.id}/partition-expiration`);
    expect(jobs.total).toBe(0);
  });
});
