// A crunch with a Z-order layout through the Worker build on D1, with an agent on a real
// WebSocket: the trigger's layout reaches the job's payload, the agent's result records it in its
// settings, and the job's metrics show both; a Z-order of one column is a 422 naming the field.
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json } from "./support/client.ts";

const RECIPE = {
  partition_columns: [],
  partition_pattern: null,
  date_filter_column: null,
  cluster_columns: ["region"],
  enumerated_columns: [],
};
const ZORDER = { type: "zorder", columns: ["customer_id", "event_time"] };

const payloads: Json[] = [];

function answer(kind: string, payload: Json): Json {
  if (kind === "onboarding") return RECIPE;
  payloads.push(payload);
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
    partitions: [],
    partitions_crunched: 1,
    partitions_skipped: 0,
    settings: {
      compression: "zstd",
      compression_level: 3,
      row_group_size: 122_880,
      sort_columns: payload.layout.columns,
      sort_layout: payload.layout.type,
      parquet_version: "v1",
      reason: "untried",
      trials: [],
    },
    duration_ms: 5,
  };
}

describe("a crunch with a layout in workerd", () => {
  it("carries a Z-order from the trigger to the agent and shows it with the result's settings", async () => {
    await answeringAgent(
      "workerd-layout",
      { kinds: ["onboarding", "crunch"], capabilities: ["s3"], allow: ["s3://lake"] },
      answer,
    );
    const table = await json(
      "/api/v1/tables",
      { method: "POST", body: { name: "workerd.layout.events", uri: "s3://lake/layout-events" } },
      201,
    );
    expect((await ended(table.onboarding_job_id)).status).toBe("succeeded");

    const refused = await json(
      `/api/v1/tables/${table.id}/crunch`,
      { method: "POST", body: { whole_table: true, layout: { type: "zorder", columns: ["a"] } } },
      422,
    );
    expect(refused.errors.map((e: Json) => e.path)).toEqual(["layout.columns"]);

    const crunch = await json(
      `/api/v1/tables/${table.id}/crunch`,
      { method: "POST", body: { whole_table: true, layout: ZORDER } },
      202,
    );
    expect(crunch.layout).toEqual(ZORDER);
    expect((await ended(crunch.id)).status).toBe("succeeded");
    expect(payloads.map((p) => p.layout)).toEqual([ZORDER]);
    const metrics = await json(`/api/v1/crunch/${crunch.id}/metrics`);
    expect(metrics.job.layout).toEqual(ZORDER);
    expect(metrics.metrics.settings).toMatchObject({
      sort_columns: ["customer_id", "event_time"],
      sort_layout: "zorder",
    });
  });
});
