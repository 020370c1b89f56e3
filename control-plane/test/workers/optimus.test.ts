// Optimus submissions through the Worker build, on D1: the Cron Trigger's tick fires an active
// submission whose daily time has passed (00:00 has, whenever the suite runs) once for the UTC day,
// never a paused one; sync-now is a 409 while that run is queued; delete takes the runs with it.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, json, worker } from "./support/client.ts";

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
    const active = await json(BASE, submission("workerd daily", true), 201);
    const paused = await json(BASE, submission("workerd paused", false), 201);
    expect(active.status).toBe("pending");

    await tick();
    await tick();
    const fired = await json(`${BASE}/${active.id}`);
    expect(fired.status).toBe("running");
    expect(fired.runs).toHaveLength(1);
    expect(fired.runs[0]).toMatchObject({ trigger: "schedule", status: "running" });
    expect(fired.latest_run.job_id).toBe(fired.runs[0].job_id);
    expect((await json(`${BASE}/${paused.id}`)).runs).toHaveLength(0);

    expect((await call(`${BASE}/${active.id}/sync-now`, { method: "POST" })).status).toBe(409);
    expect((await call(`${BASE}/${active.id}/retry`, { method: "POST" })).status).toBe(422);

    expect((await call(`${BASE}/${active.id}`, { method: "DELETE" })).status).toBe(204);
    const left = await env.DB.prepare("select count(*) as n from optimus_runs where submission_id = ?")
      .bind(active.id)
      .first<{ n: number }>();
    expect(left?.n).toBe(0);
    const job = await json(`/api/v1/jobs/${fired.runs[0].job_id}`);
    expect(job.status).toBe("cancelled");
  });
});
