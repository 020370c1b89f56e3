// Tables and the scheduler through the Worker build, on D1: the JSON-parameter queries (json_each,
// UPDATE ... FROM) of the table list and the scheduler tick run on D1's SQLite, and the Cron Trigger
// handler (`scheduled`) fires a due schedule.
import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const ADMIN_KEY = "lsk_workerdtestkey0000000000000000000000000000";
const worker = () =>
  (
    exports as unknown as {
      default: Fetcher & { scheduled(options: { scheduledTime: Date; cron: string }): Promise<unknown> };
    }
  ).default;

async function call(path: string, init: { method?: string; body?: unknown } = {}) {
  const headers = new Headers({ authorization: `Bearer ${ADMIN_KEY}` });
  if (init.body !== undefined) headers.set("content-type", "application/json");
  return worker().fetch(
    new Request(`https://lakesmith.test${path}`, {
      method: init.method ?? "GET",
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    }),
  );
}

describe("tables in workerd", () => {
  it("creates a table, lists it by name and status, and a Cron Trigger tick fires its backfill", async () => {
    const created = await call("/api/v1/tables", {
      method: "POST",
      body: { name: "workerd.orders", uri: "s3://lake/orders" },
    });
    expect(created.status).toBe(201);
    const table = (await created.json()) as { id: string; onboarding_status: string };
    expect(table.onboarding_status).toBe("pending");

    const list = (await (await call("/api/v1/tables?status=pending&name=workerd.orders")).json()) as {
      total: number;
      items: { id: string }[];
    };
    expect(list.total).toBe(1);
    expect(list.items[0]?.id).toBe(table.id);

    // No agent runs in this suite: mark onboarding done in the database, as the finish hook would.
    await env.DB.prepare("update tables set onboarding_status = 'active' where id = ?").bind(table.id).run();
    const schedule = await call(`/api/v1/tables/${table.id}/schedule`, {
      method: "POST",
      body: {
        schedule_type: "backfill",
        backfill_col: "d",
        backfill_start_date: "2026-01-01",
        backfill_end_date: "2026-01-02",
      },
    });
    expect(schedule.status).toBe(201);

    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
    const jobs = (await (await call(`/api/v1/jobs?table_id=${table.id}&kind=crunch`)).json()) as {
      items: { payload: { date_range: unknown } }[];
    };
    expect(jobs.items).toHaveLength(1);
    expect(jobs.items[0]?.payload.date_range).toEqual({ start: "2026-01-01", end: "2026-01-02" });
    const got = (await (await call(`/api/v1/tables/${table.id}`)).json()) as {
      created_at: string;
      schedule: {
        crunch: { schedule_type: string; enabled: boolean; next_run_at: string | null; created_at: string };
        vacuum: null;
      };
    };
    // Timestamps are written by D1's SQLite (`view.ts`), as Date.toISOString() writes them.
    const stored = await env.DB.prepare("select created_at from tables where id = ?")
      .bind(table.id)
      .first<{ created_at: number }>();
    expect(got.created_at).toBe(new Date(stored?.created_at ?? 0).toISOString());
    expect(got.schedule.crunch.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(got.schedule.crunch).toMatchObject({
      schedule_type: "backfill",
      enabled: true,
      next_run_at: null,
    });
    expect(got.schedule.vacuum).toBeNull();
  });
});
