// Optimus ingestion through the Worker build, on D1, with an agent on a real WebSocket: the run a
// submission's create triggers is offered to the agent, its workload part is stored by the part
// hook, the run's finish queues the table's layout_scoring job in the batch that ends it (an
// INSERT ... SELECT over the workloads), the agent scores it, and the scoring's finish stores the
// recommendation and the per-day rows.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json, until, worker } from "./support/client.ts";

const tick = () => worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });

const FILTER_SET = {
  predicates: [{ column: "customer_id", op: "=", values: ["7"] }],
  columns: ["customer_id"],
  queries: 3,
  bytes_scanned: 300,
  days: { "2026-04-29": { queries: 3, bytes_scanned: 300 } },
  examples: ["select * from events where customer_id = 7"],
};

function answer(kind: string, payload: Json): Json {
  if (kind === "query_log_analysis") {
    const table = (payload.tables as Json[]).find((t) => t.table_fqn === "workerd.optimus.events") as Json;
    return {
      parts: [
        {
          type: "table_workload",
          table_fqn: table.table_fqn,
          table_id: table.table_id,
          queries: 3,
          bytes_scanned: 300,
          filter_sets: [FILTER_SET],
          other: { queries: 0, bytes_scanned: 0 },
        },
      ],
      result: {
        logs: 1,
        lines: 3,
        malformed_lines: 0,
        queries_read: 3,
        queries_in_window: 3,
        own_queries_skipped: 0,
        scans: 3,
        scans_matched: 3,
        unmatched: [],
        tables: 1,
      },
    };
  }
  return {
    measured_at: new Date().toISOString(),
    table_version: 1,
    files: 4,
    total_bytes: 4000,
    sample_rows: 400,
    pseudo_files: 4,
    method: "sample sorted and cut into 4 pseudo-files",
    current: { layout: payload.current_layout, predicted_skip_fraction: 0, measured_skip_fraction: 0 },
    candidates: [{ layout: { type: "linear", columns: ["customer_id"] }, skip_fraction: 0.75 }],
    recommendation: {
      layout: { type: "linear", columns: ["customer_id"] },
      expected_skip_fraction: 0.75,
      bytes_saved_per_day: 100,
      rewrite_bytes: 8000,
      reason: "skips 75% of the bytes scanned",
    },
    no_recommendation_reason: null,
    days: [{ day: "2026-04-29", queries: 3, bytes_scanned: 300, measured_skip_fraction: 0 }],
  };
}

describe("Optimus ingestion in workerd", () => {
  it("stores the workload, queues and runs the scoring, and stores its recommendation and days", async () => {
    const table = await json(
      "/api/v1/tables",
      {
        method: "POST",
        body: { name: "workerd.optimus.events", uri: "s3://lake/optimus-events", format: "delta" },
      },
      201,
    );
    await env.DB.prepare(
      `update tables set onboarding_status = 'active', recipe = '{"partition_columns":[],"partition_pattern":null,"date_filter_column":null,"cluster_columns":["region"],"enumerated_columns":[]}' where id = ?`,
    )
      .bind(table.id)
      .run();
    const { ws } = await answeringAgent(
      "workerd-optimus",
      {
        kinds: ["query_log_analysis", "layout_scoring"],
        capabilities: ["s3"],
        allow: ["s3://logs", "s3://lake"],
      },
      answer,
    );
    // Its create triggers the run (trigger `created`): no sync-now needed.
    const submission = await json(
      "/api/v1/optimus/runs",
      {
        method: "POST",
        body: {
          name: "workerd ingest",
          engine: "spark",
          daily_sync_time_utc: "23:59",
          query_logs_uri: "s3://logs/spark",
        },
      },
      201,
    );
    const [run] = (await json(`/api/v1/optimus/runs/${submission.id}`)).runs;
    expect(run).toMatchObject({ trigger: "created" });
    expect((await ended(run.job_id)).status).toBe("succeeded");

    const stored = await env.DB.prepare(
      "select table_id, queries, filter_sets from optimus_workloads where run_id = ?",
    )
      .bind(run.job_id)
      .all<{ table_id: string; queries: number; filter_sets: string }>();
    expect(stored.results.map((r) => ({ ...r, filter_sets: JSON.parse(r.filter_sets) }))).toEqual([
      { table_id: table.id, queries: 3, filter_sets: [FILTER_SET] },
    ]);

    const scoring = await env.DB.prepare(
      "select id, payload, locks, exclusion from jobs where kind = 'layout_scoring' and json_extract(payload, '$.run_id') = ?",
    )
      .bind(run.job_id)
      .all<{ id: string; payload: string; locks: string; exclusion: string }>();
    expect(scoring.results).toHaveLength(1);
    const job = scoring.results[0] as { id: string; payload: string; locks: string; exclusion: string };
    expect(JSON.parse(job.payload)).toMatchObject({
      table_id: table.id,
      uri: "s3://lake/optimus-events",
      // The recipe's cluster columns are no layout the files hold: no policy names one.
      current_layout: null,
      filter_sets: [FILTER_SET],
      target_file_size_mb: 512,
    });
    expect(JSON.parse(job.locks)).toEqual([`table:${table.id}/`]);
    expect(job.exclusion).toBe("layout_scoring");
    // On Workers nothing but the next tick may tell the hub about the new job.
    await tick();
    expect((await ended(job.id)).status).toBe("succeeded");

    const recs = await until(
      () =>
        env.DB.prepare(
          "select status, expected_skip_fraction, layout from optimus_recommendations where scoring_job_id = ?",
        )
          .bind(job.id)
          .all<{ status: string; expected_skip_fraction: number; layout: string }>(),
      (rows) => rows.results.length > 0,
    );
    expect(recs.results.map((r) => ({ ...r, layout: JSON.parse(r.layout) }))).toEqual([
      { status: "open", expected_skip_fraction: 0.75, layout: { type: "linear", columns: ["customer_id"] } },
    ]);
    const days = await env.DB.prepare(
      "select day, queries, bytes_scanned, run_id from optimus_table_days where submission_id = ? and table_id = ?",
    )
      .bind(submission.id, table.id)
      .all();
    expect(days.results).toEqual([{ day: "2026-04-29", queries: 3, bytes_scanned: 300, run_id: run.job_id }]);
    ws.close();
  }, 60_000);
});
