// Jobs go to agents that may take them, through the Worker build on D1 and the AgentHub Durable
// Object: two agents with different allow lists each get only their own tables' jobs (onboarding,
// a manual crunch, a crunch fired by the Cron Trigger), and a table no connected agent may use
// waits, says why, and runs once an agent allowed to use it connects.
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json, until, worker } from "./support/client.ts";

const RECIPE = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: [],
  enumerated_columns: [],
};

/** An agent allowed to use `allow` that completes every job it is offered; returns its id. */
async function agent(name: string, allow: string[]): Promise<string> {
  const hello = { kinds: ["onboarding", "crunch"], capabilities: ["s3"], allow, capacity: 2 };
  const { id } = await answeringAgent(name, hello, (kind) => (kind === "onboarding" ? RECIPE : {}));
  return id;
}

describe("job routing in workerd", () => {
  it("gives two agents with different allow lists only their own tables' jobs, manual and scheduled", async () => {
    const a = await agent("routing-a", ["s3://lake-a"]);
    const b = await agent("routing-b", ["s3://lake-b/"]);
    const owner: Record<string, string> = {};
    for (const [bucket, agentId] of [
      ["lake-a", a],
      ["lake-b", b],
    ] as const) {
      const table = await json(
        "/api/v1/tables",
        { method: "POST", body: { name: `routing.${bucket}`, uri: `s3://${bucket}/orders` } },
        201,
      );
      owner[table.id] = agentId;
      const onboarding = await ended(table.onboarding_job_id);
      expect(onboarding).toMatchObject({ status: "succeeded", agent_id: agentId });

      const manual = await json(
        `/api/v1/tables/${table.id}/crunch`,
        { method: "POST", body: { lookback_start: 3, lookback_end: 1 } },
        202,
      );
      expect(await ended(manual.id)).toMatchObject({ status: "succeeded", agent_id: agentId });

      await json(
        `/api/v1/tables/${table.id}/schedule`,
        {
          method: "POST",
          body: {
            schedule_type: "backfill",
            backfill_col: "event_date",
            backfill_start_date: "2026-01-01",
            backfill_end_date: "2026-01-02",
          },
        },
        201,
      );
    }

    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
    for (const [tableId, agentId] of Object.entries(owner)) {
      const scheduled = await until(
        () => json(`/api/v1/jobs?table_id=${tableId}&kind=crunch`),
        (page) => page.items.some((j: Json) => j.trigger === "schedule" && j.status === "succeeded"),
      );
      const job = scheduled.items.find((j: Json) => j.trigger === "schedule");
      expect(job).toMatchObject({
        agent_id: agentId,
        locations: [`s3://${agentId === a ? "lake-a" : "lake-b"}/orders`],
      });
    }
  });

  it("keeps a job no connected agent may take queued, saying why, and runs it when an allowed agent connects", async () => {
    await agent("routing-other", ["s3://lake-other"]);
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "routing.c", uri: "s3://lake-c/orders" } },
      201,
    );
    const waiting = await until(
      () => json(`/api/v1/jobs/${table.onboarding_job_id}`),
      (job) => typeof job.waiting_for === "string" && job.waiting_for.startsWith("an agent allowed to use"),
    );
    expect(waiting).toMatchObject({ status: "queued", attempt: 0, refusals: [] });
    expect(waiting.waiting_for).toContain("s3://lake-c/orders");

    const c = await agent("routing-c", ["s3://lake-c"]);
    expect(await ended(table.onboarding_job_id)).toMatchObject({ status: "succeeded", agent_id: c });
  });
});
