/**
 * `POST /api/v1/tables/{table_id}/crunch` with a `layout`: a linear sort or a Z-order over 2-4
 * distinct columns reaches the agent's payload (and the job's view) in every mode; a layout of the
 * wrong shape, or one beside `cluster_columns`, is a 422 naming the field; the OpenAPI documents it.
 */
import { ManualClock } from "@lakesmith/shared";
import { CrunchPayloadSchema } from "@lakesmith/shared/jobs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall } from "./support/tables.ts";

const clock = new ManualClock(new Date("2026-03-01T12:00:00Z"));
let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane({ clock });
  admin = adminCall(plane);
});
afterAll(() => plane.close());

let seq = 0;
const table = () => activeTable(plane, `layout.t${++seq}`);
const trigger = (tableId: string, body: unknown) => admin("POST", `/api/v1/tables/${tableId}/crunch`, body);
const ZORDER = { type: "zorder", columns: ["customer_id", "region"] };

async function payloadOf(view: { id: string }) {
  return CrunchPayloadSchema.parse((await plane.services.jobs.get(view.id))?.payload);
}

describe("a crunch trigger with a layout", () => {
  it("carries a Z-order to the agent's payload and shows it on the job", async () => {
    const res = await trigger((await table()).id, { whole_table: true, layout: ZORDER });
    expect(res.status).toBe(202);
    const view = await res.json();
    expect(view.layout).toEqual(ZORDER);
    expect((await payloadOf(view)).layout).toEqual(ZORDER);
    const metrics = await (await admin("GET", `/api/v1/crunch/${view.id}/metrics`)).json();
    expect(metrics.job.layout).toEqual(ZORDER);
  });

  it("takes a layout in lookback and backfill mode too, and a linear one of one column", async () => {
    const linear = { type: "linear", columns: ["region"] };
    for (const body of [
      { lookback_start: 3, lookback_end: 1, layout: linear },
      { backfill_start_date: "2026-01-01", backfill_end_date: "2026-01-02", layout: ZORDER },
    ]) {
      const res = await trigger((await table()).id, body);
      expect(res.status).toBe(202);
      // The answer is the (first) job queued.
      expect((await payloadOf(await res.json())).layout).toEqual(body.layout);
    }
  });

  it("leaves the layout out of the payload when none is named", async () => {
    const view = await (await trigger((await table()).id, { whole_table: true })).json();
    expect(view.layout).toBeNull();
    expect((await payloadOf(view)).layout).toBeUndefined();
  });

  it.each([
    [
      "a Z-order of one column",
      { type: "zorder", columns: ["a"] },
      "layout.columns",
      /2 to 4 columns, not 1/,
    ],
    [
      "a Z-order of five columns",
      { type: "zorder", columns: ["a", "b", "c", "d", "e"] },
      "layout.columns",
      /2 to 4/,
    ],
    [
      "a Z-order naming a column twice",
      { type: "zorder", columns: ["a", "a"] },
      "layout.columns",
      /named twice/,
    ],
    [
      "a linear layout of nine columns",
      { type: "linear", columns: "abcdefghi".split("") },
      "layout.columns",
      /1 to 8/,
    ],
    ["a linear layout of none", { type: "linear", columns: [] }, "layout.columns", /1 to 8 columns, not 0/],
    [
      "a column name with a space",
      { type: "zorder", columns: ["a", "b c"] },
      "layout.columns",
      /not a column name/,
    ],
    ["an unknown layout type", { type: "hilbert", columns: ["a", "b"] }, "layout", /./],
    ["columns as a string", { type: "zorder", columns: "a,b" }, "layout.columns", /./],
    ["an unknown layout field", { ...ZORDER, bits: 8 }, "layout", /bits/],
  ])("refuses %s with 422 naming the field", async (_name, layout, path, message) => {
    const res = await trigger((await table()).id, { whole_table: true, layout });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: { path: string; message: string }[] };
    const error = body.errors.find((e) => e.path.startsWith(path));
    expect(error, JSON.stringify(body.errors)).toBeDefined();
    expect(error?.message).toMatch(message);
  });

  it("refuses a layout beside cluster_columns with 422 naming layout", async () => {
    const res = await trigger((await table()).id, {
      whole_table: true,
      cluster_columns: "region",
      layout: ZORDER,
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: { path: string; message: string }[] };
    expect(body.errors).toEqual([
      {
        path: "layout",
        message: "send layout or cluster_columns, not both: a linear layout sorts as cluster_columns do",
      },
    ]);
  });

  it("documents the layout in the OpenAPI description of the trigger", async () => {
    const doc = await (await admin("GET", "/openapi.json")).json();
    const layout = doc.components.schemas.CrunchLayout;
    expect(JSON.stringify(layout)).toMatch(/zorder/);
    expect(layout.description).toMatch(/Z-value/);
    expect(doc.components.schemas.CrunchTrigger.properties.layout).toBeDefined();
  });
});
