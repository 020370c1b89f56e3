// Document 2's policies and managed tables through the Worker build on D1, with an agent on a real
// WebSocket: a synced Unity catalog gets a catalog and a prefix policy; the managed tables show
// their effective policy; the `:disable` and `:enable` custom methods; the managed table detail;
// and one Cron tick that onboards a qualifying table through its catalog link.
import { describe, expect, it } from "vitest";
import { answeringAgent, type Json, json, syncedWorkspace, until, worker } from "./support/client.ts";

const table = (schema: string, name: string) => ({
  full_name: `main.${schema}.${name}`,
  catalog: "main",
  schema,
  name,
  format: "DELTA",
  table_type: "EXTERNAL",
  location: `s3://lake/policies/${schema}/${name}`,
  size_bytes: 4000,
  has_partitions: false,
  updated_at: 1_767_225_600_000,
  detail: {},
});
const TABLES = [table("sales", "orders"), table("sales", "refunds"), table("hr", "people")];
const RECIPE = {
  partition_columns: [],
  partition_pattern: null,
  date_filter_column: null,
  cluster_columns: [],
  enumerated_columns: [],
};

function answer(kind: string): Json {
  if (kind === "catalog_sync")
    return {
      parts: [{ tables: TABLES }],
      result: {
        mode: "full",
        catalogs: ["main"],
        schemas_count: 2,
        tables_count: TABLES.length,
        unchanged_count: 0,
        below_min_size: 0,
        duration_ms: 3,
      },
    };
  return RECIPE;
}

const COMPACT = { actions: { compact: {} }, schedule: { frequency: "daily", time_utc: "03:00" } };

describe("policies in workerd", () => {
  it("manages a synced catalog's tables under a catalog and a prefix policy, disables and enables, and onboards on the Cron tick", async () => {
    await answeringAgent(
      "workerd-policies",
      {
        kinds: ["catalog_sync", "onboarding"],
        capabilities: ["s3"],
        allow: ["s3://lake"],
        endpoints: ["https://uc-policies.workerd.test"],
      },
      answer,
    );
    const { connection, catalogId: catalog } = await syncedWorkspace(
      "workerd-policies",
      "https://uc-policies.workerd.test",
    );
    const ids = Object.fromEntries(
      (await json(`/api/v1/catalogs/${catalog}/tables`)).items.map((t: Json) => [t.full_name, t.table_id]),
    );
    const policies = `/api/v1/catalogs/${catalog}/policies`;

    const catalogPolicy = (await json(policies, { method: "POST", body: COMPACT }, 201)).policy_id;
    const prefixPolicy = (
      await json(
        `${policies}?prefix=sales`,
        { method: "POST", body: { ...COMPACT, actions: { compress: {} } } },
        201,
      )
    ).policy_id;
    const managed = async () =>
      Object.fromEntries(
        (await json("/api/v1/managedtables?page_size=100")).items.map((t: Json) => [t.full_name, t]),
      );
    const before = await managed();
    expect(Object.keys(before).sort()).toEqual(["main.hr.people", "main.sales.orders", "main.sales.refunds"]);
    expect(before["main.hr.people"].effective_policy_id).toBe(catalogPolicy);
    expect(before["main.sales.orders"].effective_policy_id).toBe(prefixPolicy);
    expect(before["main.sales.refunds"].effective_policy_id).toBe(prefixPolicy);

    // The custom methods: disabling keeps the table managed, with no effective policy.
    const people = `/api/v1/managedtables/${encodeURIComponent(ids["main.hr.people"])}`;
    await json(`${policies}/${catalogPolicy}:disable`, { method: "POST" });
    expect(await json(people)).toMatchObject({ state: "disabled", effective_policy_id: null });
    expect((await managed())["main.sales.orders"].effective_policy_id).toBe(prefixPolicy);
    await json(`${people}/policies/${catalogPolicy}:enable`, { method: "POST" });
    const detail = await json(people);
    expect(detail).toMatchObject({ effective_policy_id: catalogPolicy, full_name: "main.hr.people" });
    expect(detail.effective_policy.actions_applied).toMatchObject([
      { action: "compact", schedule: COMPACT.schedule, schedule_source: "policy" },
    ]);
    expect(detail.lake_table_id).toBeNull();

    // One Cron tick: the tables qualify, and each is onboarded through its catalog link.
    await json("/api/v1/config", {
      method: "PUT",
      body: { min_existence_days: 0, min_qualifying_table_size_gb: 0 },
    });
    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
    const waiting = await json(people);
    expect(waiting).toMatchObject({ state: "waiting", waiting_reason: "onboarding" });
    const lake = await json(`/api/v1/tables/${waiting.lake_table_id}`);
    expect(lake).toMatchObject({ catalog_connection_id: connection.id, catalog_table: "main.hr.people" });
    const onboarding = await until(
      () => json(`/api/v1/jobs/${lake.onboarding_job_id}`),
      (j) => j.status === "succeeded" || j.status === "failed",
    );
    expect(onboarding).toMatchObject({ kind: "onboarding", status: "succeeded" });
    expect((await json(people)).lake_table).toMatchObject({ onboarding_status: "active" });
  });
});
