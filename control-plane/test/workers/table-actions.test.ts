// Document 2's table actions and runs through the Worker build on D1, with an agent on a real
// WebSocket: a synced Unity table's first action onboards it and waits; the Cron tick releases it
// once onboarding succeeded, the agent runs it, and the action and the table's runs show it ended.
import { describe, expect, it } from "vitest";
import { answeringAgent, type Json, json, syncedWorkspace, until, worker } from "./support/client.ts";

const EVENTS = {
  full_name: "main.sales.events",
  catalog: "main",
  schema: "sales",
  name: "events",
  format: "DELTA",
  table_type: "EXTERNAL",
  location: "s3://lake/actions/events",
  size_bytes: 4000,
  has_partitions: true,
  updated_at: 1_767_225_600_000,
  detail: { owner: "ops" },
};
const RECIPE = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: ["region"],
  enumerated_columns: [],
};
/** What the agent reports of the crunch: the test reads `drr` back from the action. */
const CRUNCHED = { job_type: "crunch", files_before: 4, files_after: 1, drr: 50 };

function answer(kind: string): Json {
  if (kind === "catalog_sync")
    return {
      parts: [{ tables: [EVENTS] }],
      result: {
        mode: "full",
        catalogs: ["main"],
        schemas_count: 1,
        tables_count: 1,
        unchanged_count: 0,
        below_min_size: 0,
        duration_ms: 3,
      },
    };
  if (kind === "onboarding") return RECIPE;
  return CRUNCHED;
}

describe("table actions in workerd", () => {
  it("onboards a synced table by its first action, releases the action on the tick, and lists it as a run", async () => {
    await answeringAgent(
      "workerd-table-actions",
      {
        kinds: ["catalog_sync", "onboarding", "crunch"],
        capabilities: ["s3"],
        allow: ["s3://lake"],
        endpoints: ["https://uc-actions.workerd.test"],
      },
      answer,
    );
    const { catalogId: catalog } = await syncedWorkspace(
      "workerd-actions",
      "https://uc-actions.workerd.test",
    );
    const [table] = (await json(`/api/v1/catalogs/${catalog}/tables`)).items;
    const base = `/api/v1/catalogs/${catalog}/tables/${encodeURIComponent(table.table_id)}`;

    const supported = await json(`${base}/actions`);
    expect(supported.supported.map((a: Json) => a.action)).toEqual([
      "compress",
      "compact",
      "improve_layout",
      "expire_snapshots",
      "expire_partitions",
    ]);

    const action = await json(`${base}/actions`, { method: "POST", body: { action: "compress" } }, 202);
    expect(action).toMatchObject({ action: "compress", status: "SCHEDULED", waiting_for_onboarding: true });
    const lakeTable = await json(`/api/v1/tables/${action.lakesmith_table_id}`);
    await until(
      () => json(`/api/v1/tables/${lakeTable.id}`),
      (t) => t.onboarding_status === "active",
    );
    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
    const done = await until(
      () => json(`${base}/actions/${action.action_id}`),
      (a) => a.status === "SUCCEEDED" || a.status === "FAILED",
    );
    expect(done).toMatchObject({ status: "SUCCEEDED", result: { drr: 50 }, job: { kind: "crunch" } });
    expect(done.job.payload).toMatchObject({ recipe: RECIPE, cluster_columns: ["region"] });

    const runs = await json(`${base}/runs?trigger=ACTION&status=SUCCEEDED`);
    expect(runs.items.map((r: Json) => [r.kind, r.action])).toEqual([
      ["crunch", "compress"],
      ["onboarding", null],
    ]);
    const rerun = await json(`${base}/runs/${action.action_id}`, { method: "POST" }, 202);
    expect(rerun).toMatchObject({ kind: "crunch", trigger: "ACTION" });
    expect(
      (
        await until(
          () => json(`${base}/runs/${rerun.run_id}`),
          (r) => r.status === "SUCCEEDED" || r.status === "FAILED",
        )
      ).status,
    ).toBe("SUCCEEDED");
  });
});
