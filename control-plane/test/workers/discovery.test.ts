// Discovery through the Worker build on D1: an inventory location queues its discovery at
// creation; an answering agent sends the plan, one bin's prefixes and its end as parts (each
// applied in a D1 batch, the acks saying go on), then its counts; the finish hook judges the
// merged prefixes inside the batch that ends the job, and the survivor becomes a managed prefix.
import { describe, expect, it } from "vitest";
import { answeringAgent, type Json, json, until } from "./support/client.ts";

const BASE = "/api/v1/object-maintenance";
const DAY = 86_400_000;

const row = (prefix: string, dataBytes: number, newestDaysAgo: number) => ({
  prefix,
  files: 3,
  bytes: dataBytes,
  data_files: dataBytes > 0 ? 3 : 0,
  data_bytes: dataBytes,
  oldest_ms: Date.now() - 40 * DAY,
  newest_ms: Date.now() - newestDaysAgo * DAY,
});

describe("discovery in workerd", () => {
  it("discovers an inventory location through an answering agent sending parts", async () => {
    await answeringAgent(
      "workerd-discovery",
      { kinds: ["discovery"], capabilities: ["s3"], allow: ["s3://lake"] },
      (_kind: string, payload: Json) => ({
        parts: [
          {
            type: "plan",
            report: `${payload.inventory_uri}/2026-11-25T01-00Z/manifest.json`,
            report_created_ms: Date.now() - DAY,
            bins_total: 1,
            bins: [{ id: "bin-1", key: "data/bin-1.parquet", size: 4096 }],
          },
          { type: "start", bin: "bin-1" },
          { type: "rows", bin: "bin-1", rows: [row("events/", 50_000_000, 5), row("fresh/", 50_000_000, 0)] },
          { type: "done", bin: "bin-1", files: 6, bytes: 100_000_000, scanned: 9 },
        ],
        result: {
          report: "r",
          bins_total: 1,
          bins_read: 1,
          bins_skipped: 0,
          bins_already_done: 0,
          objects_scanned: 9,
          files: 6,
          bytes: 100_000_000,
          prefix_rows: 2,
          stopped: false,
          incomplete_reports: [],
        },
      }),
    );
    const location = await json(
      `${BASE}/locations`,
      {
        method: "POST",
        body: {
          name: "workerd-inventory",
          uri: "s3://lake/landing",
          discovery_method: "inventory_report",
          inventory_uri: "s3://lake/inventory/lake/daily",
        },
      },
      201,
    );
    const [attempt] = (
      await until(
        () => json(`${BASE}/locations/${location.id}/discovery/schedules`),
        (page) => (page.items as Json[])[0]?.status === "completed",
      )
    ).items as Json[];
    expect(attempt).toMatchObject({ trigger: "creation", bins_done: 1, files_seen: 6, objects_scanned: 9 });
    expect(await json(`${BASE}/locations/${location.id}`)).toMatchObject({ status: "Active", prefixes: 1 });
    const found = (await json(`${BASE}/locations/${location.id}/discovered-prefixes`)).items as Json[];
    expect(found.map((p) => [p.prefix, p.filter_reason])).toEqual([
      ["events/", null],
      ["fresh/", "too_young"],
    ]);
    const [managed] = (await json(`${BASE}/locations/${location.id}/managed-prefixes`)).items as Json[];
    expect(managed).toMatchObject({ uri: "s3://lake/landing/events", source_state: "present", files: 3 });
  });
});
