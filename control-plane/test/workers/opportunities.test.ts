// Table opportunities through the Worker build, on D1, with an agent on a real WebSocket: a scan
// triggered by the API runs on the agent, and its finish hook's INSERT ... SELECT ... ON CONFLICT
// stores the measurement in the batch that ends the job; a second measurement replaces the first.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json } from "./support/client.ts";

let scans = 0;

/** What an agent's opportunity scan reports; each scan measures a later version with fewer small files. */
function measurement(payload: Json): Json {
  scans++;
  return {
    measured_at: new Date().toISOString(),
    table_version: 2 + scans,
    method: "rewrite of 16 sampled files / 4000000 bytes with the crunch settings tuner (zstd level 3)",
    files: 48 - scans * 10,
    total_bytes: 12_000_000,
    target_file_size_bytes: payload.target_file_size_mb * 2 ** 20,
    small_files: 48 - scans * 20,
    small_files_bytes: 6_000_000,
    small_file_share: (48 - scans * 20) / (48 - scans * 10),
    lone_small_files: 0,
    crunch_candidates: 16,
    crunch_candidate_bytes: 4_000_000,
    sample: {
      files: 16,
      bytes: 4_000_000,
      rows: 192_000,
      bytes_after: 2_400_000,
      files_after: 2,
      settings: "zstd",
    },
    potential_drr_percent: 40,
    ordering: { columns: ["customer_id"], source: "recipe", files_checked: 16, files_sorted: 0 },
    missing_ordering: true,
    suggested_columns: ["customer_id"],
    notes: [],
    duration_ms: 300,
  };
}

describe("table opportunities in workerd", () => {
  it("measures a table through an agent and shows the latest measurement", async () => {
    const table = await json(
      "/api/v1/tables",
      {
        method: "POST",
        body: { name: "workerd.opportunities", uri: "s3://lake/opportunities", format: "delta" },
      },
      201,
    );
    await env.DB.prepare("update tables set onboarding_status = 'active' where id = ?").bind(table.id).run();
    expect(await json(`/api/v1/tables/${table.id}/opportunities`)).toMatchObject({ status: "not_measured" });
    const { ws } = await answeringAgent(
      "workerd-opportunities",
      { kinds: ["opportunity_scan"], capabilities: ["s3"], allow: ["s3://lake"] },
      (_kind, payload) => measurement(payload),
    );

    const first = await json(`/api/v1/tables/${table.id}/opportunities:scan`, { method: "POST" }, 202);
    await ended(first.job_id);
    const measured = await json(`/api/v1/tables/${table.id}/opportunities`);
    expect(measured).toMatchObject({
      status: "measured",
      scan: null,
      measurement: { job_id: first.job_id, table_version: 3, small_files: 28, potential_drr_percent: 40 },
    });

    const second = await json(`/api/v1/tables/${table.id}/opportunities:scan`, { method: "POST" }, 202);
    await ended(second.job_id);
    expect((await json(`/api/v1/tables/${table.id}/opportunities`)).measurement).toMatchObject({
      job_id: second.job_id,
      table_version: 4,
      small_files: 8,
    });
    ws.close();
  }, 60_000);
});
