// A crunch fanned out per partition through the Worker build on D1, with agents on real
// WebSockets: a backfill over three days of a table partitioned by date queues three jobs, each
// with its day; a trigger sharing a day with them is a 409 that queues nothing, one on other days
// is queued beside them, a whole-table crunch is a 409; an agent then runs every day's job.
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json } from "./support/client.ts";

const RECIPE = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: [],
  enumerated_columns: [],
};
const payloads: Json[] = [];

function crunched(payload: Json): Json {
  payloads.push(payload);
  const day = payload.partition.value;
  return {
    job_type: "crunch",
    table_version_before: 1,
    committed_version: 2,
    files_before: 4,
    files_after: 1,
    bytes_before: 4000,
    bytes_after: 2000,
    drr: 50,
    rows_in: 10,
    rows_out: 10,
    partitions: [
      {
        partition: `event_date=${day}`,
        status: "crunched",
        files_before: 4,
        files_after: 1,
        bytes_before: 4000,
        bytes_after: 2000,
        rows: 10,
      },
    ],
    partitions_crunched: 1,
    partitions_skipped: 0,
    settings: null,
    duration_ms: 5,
  };
}

describe("a crunch fanned out per partition in workerd", () => {
  it("queues a job per day, refuses overlapping triggers whole, and runs every day's job", async () => {
    const hello = { capabilities: ["s3"], allow: ["s3://lake"] };
    await answeringAgent("workerd-fanout-onboard", { ...hello, kinds: ["onboarding"] }, () => RECIPE);
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "workerd.fanout.events", uri: "s3://lake/fanout-events" } },
      201,
    );
    expect((await ended(table.onboarding_job_id)).status).toBe("succeeded");
    const crunch = (body: Json, status: number) =>
      json(`/api/v1/tables/${table.id}/crunch`, { method: "POST", body }, status);

    // No agent takes crunch jobs yet: they stay queued, and hold their days.
    const first = await crunch({ backfill_start_date: "2026-01-01", backfill_end_date: "2026-01-03" }, 202);
    expect(first.jobs.map((j: Json) => j.partition)).toEqual([
      "event_date=2026-01-01",
      "event_date=2026-01-02",
      "event_date=2026-01-03",
    ]);
    expect(first.id).toBe(first.jobs[0].id);
    const shared = await crunch({ backfill_start_date: "2026-01-03", backfill_end_date: "2026-01-04" }, 409);
    expect(shared.detail).toContain(`'${first.jobs[2].id}' queued`);
    const beside = await crunch({ backfill_start_date: "2026-01-04", backfill_end_date: "2026-01-05" }, 202);
    expect(beside.jobs).toHaveLength(2);
    await crunch({ whole_table: true }, 409);
    const listed = await json(`/api/v1/tables/${table.id}/crunch`);
    expect(listed.total).toBe(5);

    await answeringAgent("workerd-fanout-crunch", { ...hello, kinds: ["crunch"], capacity: 5 }, (_, p) =>
      crunched(p),
    );
    for (const job of [...first.jobs, ...beside.jobs]) expect((await ended(job.id)).status).toBe("succeeded");
    expect(payloads.map((p) => [p.date_range.start, p.partition.value]).sort()).toEqual(
      ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"].map((d) => [d, d]),
    );
  });
});
