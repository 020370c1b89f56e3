// Optimus submissions through the Worker build, on D1: an active create triggers its first run
// (trigger `created`), which stands in for the day's; a paused one queues nothing; the Cron Trigger's
// tick fires a resumed submission whose daily time has passed (00:00 has, whenever the suite runs)
// once for the UTC day, never a paused one; sync-now is a 409 while a run is queued; delete takes
// the runs with it.
// Then a recommendation listed, applied, marked on the metrics and reverted (below).
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, call, ended, json, syncedWorkspace, worker } from "./support/client.ts";

const BASE = "/api/v1/optimus/runs";
const tick = () => worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
const submission = (name: string, active: boolean) => ({
  method: "POST",
  body: {
    name,
    engine: "trino",
    daily_sync_time_utc: "00:00",
    query_logs_uri: "gs://logs-bucket/trino",
    active,
  },
});

describe("Optimus submissions in workerd", () => {
  it("fires on the Cron tick once a day, never a paused one, and deletes with its runs", async () => {
    // Created active: its first run stands in for today's, so the tick does not fire it again today.
    const created = await json(BASE, submission("workerd created", true), 201);
    expect(created.status).toBe("running");
    const createdRuns = (await json(`${BASE}/${created.id}`)).runs;
    expect(createdRuns).toMatchObject([{ trigger: "created", status: "running" }]);
    // Created paused, then resumed: nothing queued until the tick fires it.
    const daily = await json(BASE, submission("workerd daily", false), 201);
    const paused = await json(BASE, submission("workerd paused", false), 201);
    expect(paused.status).toBe("paused");
    expect((await json(`${BASE}/${daily.id}`)).runs).toHaveLength(0);
    expect((await call(`${BASE}/${daily.id}`, { method: "PATCH", body: { active: true } })).status).toBe(200);
    expect((await json(`${BASE}/${daily.id}`)).runs).toHaveLength(0);

    await tick();
    await tick();
    const fired = await json(`${BASE}/${daily.id}`);
    expect(fired.status).toBe("running");
    expect(fired.runs).toMatchObject([{ trigger: "schedule", status: "running" }]);
    expect(fired.latest_run.job_id).toBe(fired.runs[0].job_id);
    expect((await json(`${BASE}/${created.id}`)).runs).toEqual(createdRuns);
    expect((await json(`${BASE}/${paused.id}`)).runs).toHaveLength(0);

    expect((await call(`${BASE}/${daily.id}/sync-now`, { method: "POST" })).status).toBe(409);
    expect((await call(`${BASE}/${daily.id}/retry`, { method: "POST" })).status).toBe(422);

    for (const s of [daily, created, paused])
      expect((await call(`${BASE}/${s.id}`, { method: "DELETE" })).status).toBe(204);
    const left = await env.DB.prepare("select count(*) as n from optimus_runs where submission_id in (?, ?)")
      .bind(daily.id, created.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    for (const run of [...fired.runs, ...createdRuns])
      expect((await json(`/api/v1/jobs/${run.job_id}`)).status).toBe("cancelled");
  });
});

// One recommendation's path on D1: a run that succeeds through an agent, the recommendation its
// scoring stored, listed with its table; applied to a table that inherits the catalog's policy
// (its own policy created beside it), marked on the metrics, and reverted (that policy deleted).
describe("Optimus recommendations in workerd", () => {
  it("lists, applies, marks and reverts a recommendation on D1", async () => {
    const orders = {
      full_name: "main.opt.orders",
      catalog: "main",
      schema: "opt",
      name: "orders",
      format: "DELTA",
      table_type: "EXTERNAL",
      location: "s3://lake/optimus/opt/orders",
      size_bytes: 4000,
      has_partitions: false,
      updated_at: 1_767_225_600_000,
      detail: {},
    };
    await answeringAgent(
      "workerd-optimus-recs",
      {
        kinds: ["catalog_sync", "query_log_analysis"],
        capabilities: ["s3"],
        allow: ["s3://lake", "s3://logs"],
        endpoints: ["https://uc-optimus.workerd.test"],
      },
      (kind) =>
        kind === "catalog_sync"
          ? {
              parts: [{ tables: [orders] }],
              result: {
                mode: "full",
                catalogs: ["main"],
                schemas_count: 1,
                tables_count: 1,
                unchanged_count: 0,
                below_min_size: 0,
                duration_ms: 1,
              },
            }
          : ANALYSIS,
    );
    const { connection, catalogId } = await syncedWorkspace(
      "workerd-optimus",
      "https://uc-optimus.workerd.test",
    );
    const catalogPolicy = (
      await json(
        `/api/v1/catalogs/${catalogId}/policies`,
        { method: "POST", body: { actions: { compress: {} } } },
        201,
      )
    ).policy_id;
    const table = await json(
      "/api/v1/tables",
      {
        method: "POST",
        body: { name: "opt_orders", catalog_connection_id: connection.id, catalog_table: orders.full_name },
      },
      201,
    );
    // Created paused (its create triggers no run), then moved to the agent's logs and resumed (a PATCH
    // never triggers one): the run below is the only one.
    const sub = await json(BASE, submission("workerd recs", false), 201);
    await json(`${BASE}/${sub.id}`, {
      method: "PATCH",
      body: { query_logs_uri: "s3://logs/opt", active: true },
    });
    const run = await json(`${BASE}/${sub.id}/sync-now`, { method: "POST" }, 202);
    expect((await ended(run.job_id)).status).toBe("succeeded");

    const recId = "orec_workerd_1";
    await env.DB.prepare(
      `insert into optimus_recommendations (id, submission_id, run_id, scoring_job_id, table_id, table_fqn, layout,
         expected_skip_fraction, current_skip_fraction, bytes_saved_per_day, rewrite_bytes, reason, evidence, status, created_at)
       values (?, ?, ?, 'job_scoring_workerd', ?, ?, ?, 0.75, 0.1, 100, 8000, 'skips 75%', ?, 'open', ?)`,
    )
      .bind(
        recId,
        sub.id,
        run.job_id,
        table.id,
        orders.full_name,
        JSON.stringify(LAYOUT),
        JSON.stringify({
          candidates: [],
          sample_rows: 400,
          pseudo_files: 4,
          method: "m",
          table_version: 1,
          filter_sets: [],
        }),
        Date.now(),
      )
      .run();

    const page = await json(`${BASE}/${sub.id}/recommendations`);
    expect(page).toMatchObject({
      total: 1,
      run_id: run.job_id,
      items: [{ id: recId, status: "open", layout: LAYOUT }],
    });
    expect((await json(`${BASE}/${sub.id}/tables`)).items).toMatchObject([
      { table_fqn: orders.full_name, open: 1 },
    ]);

    const applied = await json(`/api/v1/optimus/recommendations/${recId}/apply`, {
      method: "POST",
      body: {},
    });
    expect(applied.policy).toMatchObject({ catalog_id: catalogId, created: true });
    const managedPath = `/api/v1/managedtables/${encodeURIComponent(applied.policy.table_id)}`;
    expect((await json(managedPath)).effective_policy_id).toBe(applied.policy.policy_id);
    const own = await json(`/api/v1/catalogs/${catalogId}/policies/${applied.policy.policy_id}`);
    expect(own.actions).toEqual({ compress: {}, improve_layout: { layout: LAYOUT } });

    const metrics = await json(`${BASE}/${sub.id}/tables/${orders.full_name}/metrics?days=7`);
    expect(metrics.days).toHaveLength(7);
    expect(metrics.markers).toMatchObject([{ recommendation_id: recId, layout: LAYOUT, reverted_at: null }]);

    const reverted = await json(`/api/v1/optimus/recommendations/${recId}/revert`, { method: "POST" });
    expect(reverted).toMatchObject({ policy_change: "deleted", recommendation: { status: "reverted" } });
    expect((await json(managedPath)).effective_policy_id).toBe(catalogPolicy);
    expect((await call(`/api/v1/optimus/recommendations/${recId}/dismiss`, { method: "POST" })).status).toBe(
      409,
    );
  });
});

const LAYOUT = { type: "linear", columns: ["order_day"] };
const ANALYSIS = {
  logs: 1,
  lines: 1,
  malformed_lines: 0,
  queries_read: 1,
  queries_in_window: 1,
  own_queries_skipped: 0,
  scans: 1,
  scans_matched: 0,
  unmatched: [],
  tables: 0,
};
