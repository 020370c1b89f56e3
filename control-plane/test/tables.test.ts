import { ManualClock } from "@lakesmith/shared";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lakeTables, schedules } from "../src/db/schema.ts";
import { scheduleToWire } from "../src/schedules/schemas.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { activeTable, adminCall, createTable, finishOnboarding } from "./support/tables.ts";

let plane: TestPlane;
let admin: ReturnType<typeof adminCall>;
beforeAll(async () => {
  plane = await startTestPlane();
  admin = adminCall(plane);
});
afterAll(() => plane.close());

const paths = async (res: Response) => ((await res.json()).errors ?? []).map((e: { path: string }) => e.path);

describe("creating tables", () => {
  it("creates a pending table with defaults, no schedules, and a queued onboarding job", async () => {
    const res = await admin("POST", "/api/v1/tables", {
      name: "sales.orders",
      uri: "s3://lake/sales/orders",
    });
    expect(res.status).toBe(201);
    const table = await res.json();
    expect(table).toMatchObject({
      name: "sales.orders",
      uri: "s3://lake/sales/orders",
      format: "delta",
      priority: "P2",
      target_file_size_mb: 512,
      parquet_v2: false,
      inventory_report_uri: null,
      onboarding_status: "pending",
      onboarding_error: null,
      recipe: null,
      schedule: { crunch: null, vacuum: null, partition_expiration: null },
    });
    const job = await plane.services.jobs.get(table.onboarding_job_id);
    expect(job).toMatchObject({
      kind: "onboarding",
      status: "queued",
      tableId: table.id,
      priority: "P2",
      requires: ["s3"],
      payload: { table_id: table.id, uri: "s3://lake/sales/orders", format: "delta" },
    });
  });

  it("takes format, priority, target size, Parquet v2 and inventory report URI", async () => {
    const table = await createTable(plane, "web.clicks", {
      format: "iceberg",
      priority: "P1",
      target_file_size_mb: 256,
      parquet_v2: true,
      inventory_report_uri: "s3://inventory/web/clicks/manifest.json",
    });
    expect(table).toMatchObject({
      format: "iceberg",
      priority: "P1",
      target_file_size_mb: 256,
      parquet_v2: true,
      inventory_report_uri: "s3://inventory/web/clicks/manifest.json",
    });
    const job = await plane.services.jobs.get(table.onboarding_job_id);
    expect(job?.priority).toBe("P1");
  });

  it("answers 409 for a duplicate name and says how to find the existing id", async () => {
    await createTable(plane, "dup.table");
    const res = await admin("POST", "/api/v1/tables", { name: "dup.table", uri: "s3://other/x" });
    expect(res.status).toBe(409);
    const problem = await res.json();
    expect(problem.detail).toContain("GET /api/v1/tables?name=dup.table");
    expect(problem.errors).toEqual([{ path: "name", message: "already exists" }]);
    const list = await (await admin("GET", "/api/v1/tables?name=dup.table")).json();
    expect(list.total).toBe(1);
  });

  it.each([
    [{ uri: "s3://lake/a" }, "name"],
    [{ name: "", uri: "s3://lake/a" }, "name"],
    [{ name: "has space", uri: "s3://lake/a" }, "name"],
    [{ name: "x".repeat(256), uri: "s3://lake/a" }, "name"],
    [{ name: "ok1" }, "uri"],
    [{ name: "ok2", uri: "lake/a" }, "uri"],
    [{ name: "ok3", uri: "s3://lake" }, "uri"],
    [{ name: "ok4", uri: "s3://lake/" }, "uri"],
    [{ name: "ok5", uri: "s3:///path" }, "uri"],
    [{ name: "ok6", uri: "S3://lake/a" }, "uri"],
    [{ name: "ok7", uri: "s3://lake/a", format: "parquet" }, "format"],
    [{ name: "ok8", uri: "s3://lake/a", priority: "P3" }, "priority"],
    [{ name: "ok9", uri: "s3://lake/a", target_file_size_mb: 0 }, "target_file_size_mb"],
    [{ name: "ok10", uri: "s3://lake/a", inventory_report_uri: "nope" }, "inventory_report_uri"],
    [{ name: "ok12", uri: "s3://lake/a", parquet_v2: "yes" }, "parquet_v2"],
    [{ name: "ok11", uri: "s3://lake/a", onboarding_status: "active" }, ""],
  ])("answers 422 naming the wrong field for %j", async (body, field) => {
    const res = await admin("POST", "/api/v1/tables", body);
    expect(res.status).toBe(422);
    const problem = await res.json();
    expect(problem.errors.map((e: { path: string }) => e.path)).toContain(field || "(body)");
    const name = (body as { name?: unknown }).name;
    if (typeof name === "string") expect((await plane.services.tables.page({ name }, 0, 1)).total).toBe(0);
  });

  it("accepts a local file:/// table location", async () => {
    const res = await admin("POST", "/api/v1/tables", { name: "local.t", uri: "file:///data/local/t" });
    expect(res.status).toBe(201);
    const job = await plane.services.jobs.get((await res.json()).onboarding_job_id);
    expect(job?.requires).toEqual(["file"]);
  });
});

describe("reading, updating and deleting a table", () => {
  it("gets a table with its embedded schedules, and 404 for an unknown id", async () => {
    const table = await activeTable(plane, "read.me");
    await admin("POST", `/api/v1/tables/${table.id}/schedule`, {
      schedule_type: "daily",
      lookback_start: 7,
      lookback_end: 1,
      run_time_utc: "03:15",
    });
    const got = await (await admin("GET", `/api/v1/tables/${table.id}`)).json();
    expect(got.onboarding_status).toBe("active");
    expect(got.schedule.crunch).toMatchObject({ job_type: "crunch", run_time_utc: "03:15", enabled: true });
    expect(got.schedule.vacuum).toBeNull();
    const missing = await admin("GET", "/api/v1/tables/tbl_nope");
    expect(missing.status).toBe(404);
    expect((await missing.json()).detail).toContain("tbl_nope");
  });

  it("embeds schedules exactly as the schedule routes return them, in GET and in the list", async () => {
    const table = await activeTable(plane, "embed.same");
    await admin("POST", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`, {
      schedule_type: "backfill",
      backfill_col: "d",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-02",
      enabled: false,
    });
    await admin("PUT", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`, { backfill_col: "e" });
    const schedule = await (await admin("GET", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`)).json();
    const got = await (await admin("GET", `/api/v1/tables/${table.id}`)).json();
    expect(got.schedule.vacuum).toEqual(schedule);
    const listed = await (await admin("GET", "/api/v1/tables?name=embed.same")).json();
    expect(listed.items[0]).toEqual(got);
  });

  it("updates priority, target file size and Parquet v2, leaving other fields alone", async () => {
    const table = await createTable(plane, "update.me");
    const res = await admin("PUT", `/api/v1/tables/${table.id}`, {
      priority: "P1",
      target_file_size_mb: 1024,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      priority: "P1",
      target_file_size_mb: 1024,
      parquet_v2: false,
      uri: "s3://lake/update.me",
    });
    expect((await (await admin("GET", `/api/v1/tables/${table.id}`)).json()).priority).toBe("P1");
    const v2 = await admin("PUT", `/api/v1/tables/${table.id}`, { parquet_v2: true });
    expect(await v2.json()).toMatchObject({ priority: "P1", target_file_size_mb: 1024, parquet_v2: true });
    const bad = await admin("PUT", `/api/v1/tables/${table.id}`, { parquet_v2: 1 });
    expect(bad.status).toBe(422);
    expect(await paths(bad)).toEqual(["parquet_v2"]);
  });

  it("refuses an empty update, a bad value and a field that is not updatable with 422", async () => {
    const table = await createTable(plane, "update.bad");
    expect((await admin("PUT", `/api/v1/tables/${table.id}`, {})).status).toBe(422);
    const bad = await admin("PUT", `/api/v1/tables/${table.id}`, { priority: "high" });
    expect(bad.status).toBe(422);
    expect(await paths(bad)).toEqual(["priority"]);
    const fixed = await admin("PUT", `/api/v1/tables/${table.id}`, { name: "renamed" });
    expect(fixed.status).toBe(422);
  });

  it("answers 404 when updating or deleting an unknown table", async () => {
    expect((await admin("PUT", "/api/v1/tables/tbl_nope", { priority: "P1" })).status).toBe(404);
    expect((await admin("DELETE", "/api/v1/tables/tbl_nope")).status).toBe(404);
  });

  it("deletes a table with 204, removes its schedules and cancels its queued jobs", async () => {
    const table = await activeTable(plane, "delete.me");
    const sched = await admin("POST", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`, {
      schedule_type: "backfill",
      backfill_col: "d",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-02",
    });
    expect(sched.status).toBe(201);
    const pending = await createTable(plane, "delete.pending");

    expect((await admin("DELETE", `/api/v1/tables/${table.id}`)).status).toBe(204);
    expect((await admin("GET", `/api/v1/tables/${table.id}`)).status).toBe(404);
    expect((await admin("GET", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`)).status).toBe(404);
    expect((await admin("DELETE", `/api/v1/tables/${table.id}`)).status).toBe(404);

    expect((await admin("DELETE", `/api/v1/tables/${pending.id}`)).status).toBe(204);
    expect((await plane.services.jobs.get(pending.onboarding_job_id))?.status).toBe("cancelled");
  });
});

describe("listing tables", () => {
  let lister: TestPlane;
  let call: ReturnType<typeof adminCall>;
  beforeAll(async () => {
    lister = await startTestPlane();
    call = adminCall(lister);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await createTable(lister, `t${i}`)).id);
    for (const i of [1, 3, 5]) await finishOnboarding(lister, ids[i] as string);
    await finishOnboarding(lister, ids[6] as string, { error: "no such bucket" });
  });
  afterAll(() => lister.close());

  const page = async (query: string) => {
    const res = await call("GET", `/api/v1/tables${query}`);
    expect(res.status).toBe(200);
    return res.json();
  };
  const names = (p: { items: { name: string }[] }) => p.items.map((t) => t.name);

  it("lists by name with the default page and the total", async () => {
    const all = await page("");
    expect(all).toMatchObject({ total: 7, offset: 0, limit: 100 });
    expect(names(all)).toEqual(["t0", "t1", "t2", "t3", "t4", "t5", "t6"]);
  });

  it("pages with offset and limit, and an offset past the end is an empty page with the total", async () => {
    expect(names(await page("?limit=3"))).toEqual(["t0", "t1", "t2"]);
    expect(names(await page("?offset=3&limit=3"))).toEqual(["t3", "t4", "t5"]);
    const last = await page("?offset=6&limit=3");
    expect(names(last)).toEqual(["t6"]);
    expect(last.total).toBe(7);
    const beyond = await page("?offset=7");
    expect(beyond).toMatchObject({ items: [], total: 7, offset: 7, limit: 100 });
    expect((await page("?limit=1000")).items).toHaveLength(7);
  });

  it("returns every window of every filter as the slice of the whole list, front half and back half alike", async () => {
    for (const filter of ["", "status=pending", "status=active", "status=failed", "name=t4"]) {
      const whole = names(await page(`?${filter}`));
      for (let offset = 0; offset <= whole.length + 1; offset++)
        for (const limit of [1, 2, 3, 7]) {
          const p = await page(`?${filter}&offset=${offset}&limit=${limit}`);
          expect({ filter, offset, limit, items: names(p), total: p.total }).toEqual({
            filter,
            offset,
            limit,
            items: whole.slice(offset, offset + limit),
            total: whole.length,
          });
        }
    }
  });

  it("filters by onboarding status with the filtered total", async () => {
    const active = await page("?status=active");
    expect(names(active)).toEqual(["t1", "t3", "t5"]);
    expect(active.total).toBe(3);
    const pending = await page("?status=pending&limit=2&offset=1");
    expect(names(pending)).toEqual(["t2", "t4"]);
    expect(pending.total).toBe(3);
    const failed = await page("?status=failed");
    expect(failed.items[0]).toMatchObject({ name: "t6", onboarding_error: "no such bucket" });
    expect((await page("?status=retry")).total).toBe(0);
  });

  it("filters by exact name, alone or with a status", async () => {
    expect(await page("?name=t3")).toMatchObject({ total: 1, items: [{ name: "t3" }] });
    expect((await page("?name=t")).total).toBe(0);
    expect((await page("?name=t3&status=pending")).total).toBe(0);
    expect((await page("?name=t3&status=active")).total).toBe(1);
  });

  it.each([
    ["?limit=0", "limit"],
    ["?limit=1001", "limit"],
    ["?offset=-1", "offset"],
    ["?limit=abc", "limit"],
    ["?status=done", "status"],
  ])("answers 422 for %s", async (query, field) => {
    const res = await call("GET", `/api/v1/tables${query}`);
    expect(res.status).toBe(422);
    expect(await paths(res)).toEqual([field]);
  });

  it("keeps the total right as tables come and go", async () => {
    const extra = await createTable(lister, "t7");
    expect((await page("?status=pending")).total).toBe(4);
    await call("DELETE", `/api/v1/tables/${extra.id}`);
    expect((await page("")).total).toBe(7);
  });
});

describe("a table's JSON follows every write", () => {
  // The list and GET read each row's `wire` JSON, which triggers keep (migration 0005). Here every
  // kind of write is followed by a comparison with the JSON built from the rows themselves.
  let plane2: TestPlane;
  let call: ReturnType<typeof adminCall>;
  beforeAll(async () => {
    plane2 = await startTestPlane({ clock: new ManualClock(new Date("2026-03-10T12:00:00.000Z")) });
    call = adminCall(plane2);
  });
  afterAll(() => plane2.close());

  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  async function fromRows(id: string) {
    const { db } = plane2.services;
    const [t] = await db.select().from(lakeTables).where(eq(lakeTables.id, id));
    if (!t) throw new Error(`no table ${id}`);
    const rows = await db.select().from(schedules).where(eq(schedules.tableId, id));
    const byType = (type: string) => {
      const row = rows.find((r) => r.jobType === type);
      return row ? scheduleToWire(row) : null;
    };
    return {
      id: t.id,
      name: t.name,
      uri: t.uri,
      format: t.format,
      priority: t.priority,
      target_file_size_mb: t.targetFileSizeMb,
      parquet_v2: t.parquetV2,
      inventory_report_uri: t.inventoryReportUri,
      catalog_connection_id: t.catalogConnectionId,
      catalog_table: t.catalogFullName,
      catalog_table_deleted: t.catalogTableDeletedAt !== null,
      onboarding_status: t.onboardingStatus,
      onboarding_error: t.onboardingError,
      onboarding_job_id: t.onboardingJobId,
      recipe: t.recipe,
      onboarded_at: iso(t.onboardedAt),
      schedule: {
        crunch: byType("crunch"),
        vacuum: byType("vacuum"),
        partition_expiration: byType("partition_expiration"),
      },
      created_at: iso(t.createdAt),
      updated_at: iso(t.updatedAt),
    };
  }
  async function expectSame(id: string, step: string) {
    const expected = await fromRows(id);
    const got = await (await call("GET", `/api/v1/tables/${id}`)).json();
    const listed = (await (await call("GET", `/api/v1/tables?name=${expected.name}`)).json()).items[0];
    expect({ step, got, listed }).toEqual({ step, got: expected, listed: expected });
  }

  it("after creating, updating, onboarding, scheduling, a tick, a retry and deleting schedules", async () => {
    const table = await createTable(plane2, "wire.follows", { inventory_report_uri: "s3://inv/a.json" });
    await expectSame(table.id, "created");
    expect(
      (
        await call("PUT", `/api/v1/tables/${table.id}`, {
          priority: "P1",
          target_file_size_mb: 64,
          parquet_v2: true,
          inventory_report_uri: null,
        })
      ).status,
    ).toBe(200);
    await expectSame(table.id, "updated");
    await finishOnboarding(plane2, table.id);
    await expectSame(table.id, "onboarded");
    const daily = { schedule_type: "daily", lookback_start: 3, lookback_end: 1, run_time_utc: "12:30" };
    expect((await call("POST", `/api/v1/tables/${table.id}/schedule`, daily)).status).toBe(201);
    const backfill = {
      schedule_type: "backfill",
      backfill_col: "event_date",
      backfill_start_date: "2026-01-01",
      backfill_end_date: "2026-01-31",
    };
    expect((await call("POST", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`, backfill)).status).toBe(
      201,
    );
    await expectSame(table.id, "scheduled");
    expect((await call("PUT", `/api/v1/tables/${table.id}/schedule`, { enabled: false })).status).toBe(200);
    expect(
      (await call("PUT", `/api/v1/tables/${table.id}/schedule`, { enabled: true, run_time_utc: "12:45" }))
        .status,
    ).toBe(200);
    await expectSame(table.id, "schedule updated");
    const tick = await plane2.services.scheduler.tick(new Date("2026-03-10T13:00:00.000Z"));
    expect(tick.fired).toBe(2);
    await expectSame(table.id, "fired");
    expect((await call("DELETE", `/api/v1/tables/${table.id}/schedule?job_type=vacuum`)).status).toBe(204);
    await expectSame(table.id, "schedule deleted");

    const failing = await createTable(plane2, "wire.fails");
    await finishOnboarding(plane2, failing.id, { error: "no such bucket" });
    await expectSame(failing.id, "onboarding failed");
    expect((await call("POST", `/api/v1/onboarding/${failing.id}/retry`)).status).toBe(200);
    await expectSame(failing.id, "retrying");
  });
});

describe("deep pages of long lists", () => {
  // More tables than BOOKMARK_STRIDE per list, so deep pages are read from bookmarks; the expected
  // pages are computed here from the rows themselves, after every kind of change that moves
  // positions in a list (a table added, deleted, renamed, or moved to another status).
  let deep: TestPlane;
  let call: ReturnType<typeof adminCall>;
  const rows = new Map<string, string>(); // name -> onboarding status
  beforeAll(async () => {
    deep = await startTestPlane();
    call = adminCall(deep);
    const statuses = ["active", "active", "pending", "failed"];
    const now = Date.now();
    await deep.services.db.run(sql`
      with recursive seq(i) as (select 0 union all select i + 1 from seq where i + 1 < 4200)
      insert into tables (id, name, uri, format, priority, target_file_size_mb, onboarding_status, created_at, updated_at)
      select printf('tbl_deep%05d', i), printf('deep.t%05d', (i * 7919) % 4200), printf('s3://lake/t%05d', i), 'delta',
             'P2', 512, case i % 4 when 0 then 'active' when 1 then 'active' when 2 then 'pending' else 'failed' end,
             ${now}, ${now}
      from seq`);
    for (let i = 0; i < 4200; i++)
      rows.set(`deep.t${String((i * 7919) % 4200).padStart(5, "0")}`, statuses[i % 4] as string);
  });
  afterAll(() => deep.close());

  const expected = (status?: string) =>
    [...rows]
      .filter(([, s]) => !status || s === status)
      .map(([name]) => name)
      .sort();
  const offsets = (n: number) => [
    0,
    999,
    1000,
    1001,
    1500,
    1999,
    2000,
    2050,
    n - 1000,
    n - 101,
    n - 1,
    n,
    n + 5,
  ];

  async function expectPages(status?: string) {
    const whole = expected(status);
    for (const offset of offsets(whole.length).filter((o) => o >= 0))
      for (const limit of [1, 100, 1000]) {
        const query = `?offset=${offset}&limit=${limit}${status ? `&status=${status}` : ""}`;
        const page = await (await call("GET", `/api/v1/tables${query}`)).json();
        expect({ query, total: page.total, items: page.items.map((t: { name: string }) => t.name) }).toEqual({
          query,
          total: whole.length,
          items: whole.slice(offset, offset + limit),
        });
      }
  }

  it("returns the exact slice at every depth, for all tables and by status, read twice", async () => {
    for (const status of [undefined, "active", "pending", "failed"]) {
      await expectPages(status);
      await expectPages(status); // the second read starts from the bookmarks the first one found
    }
  });

  it("stays exact after tables are added, deleted, renamed and moved to another status", async () => {
    await expectPages();
    await expectPages("active");
    const changes: [string, () => Promise<void>][] = [
      [
        "added",
        async () => {
          for (const name of ["aaa.first", "deep.t00500x", "deep.t03000x"]) {
            await createTable(deep, name);
            rows.set(name, "pending");
          }
        },
      ],
      [
        "deleted",
        async () => {
          for (const name of ["deep.t00010", "deep.t02000"]) {
            const [table] = await deep.services.db.all<{ id: string }>(
              sql`select id from tables where name = ${name}`,
            );
            const id = table?.id;
            expect((await call("DELETE", `/api/v1/tables/${id}`)).status).toBe(204);
            rows.delete(name);
          }
        },
      ],
      [
        "renamed",
        async () => {
          await deep.services.db.run(sql`update tables set name = 'zzz.last' where name = 'deep.t00004'`);
          rows.set("zzz.last", rows.get("deep.t00004") as string);
          rows.delete("deep.t00004");
        },
      ],
      [
        "moved to another status",
        async () => {
          await deep.services.db.run(sql`update tables set onboarding_status = 'active'
            where onboarding_status = 'failed' and name < 'deep.t01000'`);
          for (const [name, status] of rows)
            if (status === "failed" && name < "deep.t01000") rows.set(name, "active");
        },
      ],
    ];
    for (const [, change] of changes) {
      await change();
      for (const status of [undefined, "active", "pending", "failed"]) await expectPages(status);
    }
  });
});

describe("inventory history", () => {
  it("records every change of inventory_report_uri, newest first, and not an unchanged value", async () => {
    const table = await createTable(plane, "inv.one", { inventory_report_uri: "s3://inv/a.json" });
    await admin("PUT", `/api/v1/tables/${table.id}`, { inventory_report_uri: "s3://inv/b.json" });
    await admin("PUT", `/api/v1/tables/${table.id}`, { inventory_report_uri: "s3://inv/b.json" });
    await admin("PUT", `/api/v1/tables/${table.id}`, { priority: "P1" });
    await admin("PUT", `/api/v1/tables/${table.id}`, { inventory_report_uri: null });
    const res = await admin("GET", `/api/v1/tables/${table.id}/inventory-history`);
    expect(res.status).toBe(200);
    const history = await res.json();
    expect(history).toMatchObject({ total: 3, offset: 0, limit: 50 });
    expect(
      history.items.map((h: { previous_uri: string | null; inventory_report_uri: string | null }) => [
        h.previous_uri,
        h.inventory_report_uri,
      ]),
    ).toEqual([
      ["s3://inv/b.json", null],
      ["s3://inv/a.json", "s3://inv/b.json"],
      [null, "s3://inv/a.json"],
    ]);
    expect(history.items[0]).toMatchObject({ table_id: table.id, table_name: "inv.one" });
    expect(history.items[0].changed_by).toBeTruthy();
  });

  it("pages with a default limit of 50 and stays readable after the table is deleted", async () => {
    const table = await createTable(plane, "inv.many");
    for (let i = 0; i < 52; i++)
      await admin("PUT", `/api/v1/tables/${table.id}`, { inventory_report_uri: `s3://inv/${i}.json` });
    const first = await (await admin("GET", `/api/v1/tables/${table.id}/inventory-history`)).json();
    expect(first.items).toHaveLength(50);
    expect(first.total).toBe(52);
    expect(first.items[0].inventory_report_uri).toBe("s3://inv/51.json");
    const rest = await (await admin("GET", `/api/v1/tables/${table.id}/inventory-history?offset=50`)).json();
    expect(rest.items.map((h: { inventory_report_uri: string }) => h.inventory_report_uri)).toEqual([
      "s3://inv/1.json",
      "s3://inv/0.json",
    ]);

    expect((await admin("DELETE", `/api/v1/tables/${table.id}`)).status).toBe(204);
    const after = await (await admin("GET", `/api/v1/tables/${table.id}/inventory-history?limit=1`)).json();
    expect(after).toMatchObject({
      total: 52,
      limit: 1,
      items: [{ inventory_report_uri: "s3://inv/51.json" }],
    });
  });

  it("answers an empty page for a table without changes and 404 for an id that never existed", async () => {
    const table = await createTable(plane, "inv.none");
    expect(await (await admin("GET", `/api/v1/tables/${table.id}/inventory-history`)).json()).toMatchObject({
      items: [],
      total: 0,
    });
    expect((await admin("GET", "/api/v1/tables/tbl_never/inventory-history")).status).toBe(404);
  });
});
