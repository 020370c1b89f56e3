// Savings and metrics through the Worker build, on D1: a crunch completed by an agent on a real
// WebSocket adds its figures to the daily rollup in the D1 batch that ends it (the finish hook's
// INSERT ... SELECT ... ON CONFLICT DO UPDATE with bound parameters), and the savings and metrics
// routes read them back.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, json } from "./support/client.ts";

const GiB = 2 ** 30;

describe("savings in workerd", () => {
  it("counts a committed crunch once in the table's and the total savings and in today's metrics", async () => {
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "workerd.savings", uri: "s3://lake/savings", format: "delta" } },
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
    await json("/api/v1/config", { method: "PUT", body: { storage_cost_usd_per_gb_month: 0.02 } });
    const { ws } = await answeringAgent(
      "workerd-cruncher",
      { kinds: ["crunch"], capabilities: ["s3"], allow: ["s3://lake"] },
      () => ({
        job_type: "crunch",
        table_version_before: 1,
        committed_version: 2,
        files_before: 10,
        files_after: 2,
        bytes_before: 4 * GiB,
        bytes_after: 1 * GiB,
        drr: 75,
        rows_in: 100,
        rows_out: 100,
        partitions: [],
        partitions_crunched: 1,
        partitions_skipped: 0,
        settings: null,
        duration_ms: 10,
      }),
    );
    const job = await json(
      `/api/v1/tables/${table.id}/crunch`,
      { method: "POST", body: { backfill_start_date: "2026-01-01", backfill_end_date: "2026-01-01" } },
      202,
    );
    const done = await ended(job.id);
    expect(done.status).toBe("succeeded");

    const mine = await json(`/api/v1/savings/tables/${table.id}`);
    expect(mine).toMatchObject({
      rewrites: 1,
      bytes_before: 4 * GiB,
      bytes_after: 1 * GiB,
      bytes_saved: 3 * GiB,
      drr_percent: 75,
      storage: { effective_usd_per_gb_month: 0.02 },
    });
    expect(mine.storage.saved_usd_per_month).toBeCloseTo(0.06, 12);
    expect((await json("/api/v1/savings")).bytes_saved).toBeGreaterThanOrEqual(3 * GiB);
    // The UTC day the job finished, as the API shows it.
    const today = String(done.finished_at).slice(0, 10);
    const metrics = await json(`/api/v1/metrics/tables/${table.id}?start=${today}&end=${today}`);
    expect(metrics.days).toEqual([
      {
        date: today,
        bytes_crunched: 4 * GiB,
        bytes_after: 1 * GiB,
        bytes_saved: 3 * GiB,
        partitions_crunched: 1,
        files_reduced: 8,
        drr_percent: 75,
        partitions_deleted: 0,
        files_deleted: 0,
        bytes_deleted: 0,
      },
    ]);
    expect((await json(`/api/v1/metrics?start=2026-01-02&end=2026-01-01`, {}, 422)).errors[0].path).toBe(
      "start",
    );
    ws.close();
  }, 60_000);
});
