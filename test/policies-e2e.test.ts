/**
 * Document 2's policies end to end (issue 20): a loopback Unity Catalog server holding EXTERNAL
 * Delta tables on `file://`, a control plane whose clock a test moves (`offset-clock.ts`) and whose
 * own scheduler ticks every 200 ms, and a `lakesmith-agent` child process allowed the tables and
 * the workspace. Nothing here calls the scheduler: runs happen because the plane's time reached
 * the policy's.
 *
 * - A catalog policy manages every table; a table under `min_qualifying_table_size_gb` waits and
 *   says why. A prefix policy overrides it, a table policy overrides both.
 * - The engine onboards the tables through the catalog (the agent inspects them); at 03:00, not
 *   before, each table's policy runs (trigger policy: optimize, crunch, a Z-ordered crunch) and
 *   every partition's rows are intact; the runs list shows them as POLICY, an ad-hoc action, a
 *   rerun and a retry (of a cancelled scheduled action) as ACTION.
 * - Opportunities measured before and after the rewrites differ (version, small files).
 * - The preview of a partition-expiration policy lists what it would delete; enabled, its run the
 *   next day deletes exactly that (result, pending deletions, the rows left).
 * - A table a later sync adds under the prefix is picked up.
 * - Disabling stops a table's runs and keeps it managed; the catalog's and the global emergency
 *   stops halt new runs; an unsupported action is a 422 naming it; deleting the last policy makes
 *   a table unmanaged.
 */
import { cpSync, mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";
import { startUnityCatalog, type UnityCatalogServer } from "../agent/test/support/unity-catalog.ts";
import { jobs } from "../control-plane/src/db/schema.ts";
import type { ChildAgent } from "./support/agents.ts";
import { type DeltaRows, deltaRows } from "./support/delta-rows.ts";
import { appendCommit, type EventsTableOptions, writeEventsTable } from "./support/delta-tables.ts";
import { OffsetClock } from "./support/offset-clock.ts";
import { apiOk, connectedCatalogAgent, eventually, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "policies-e2e-"));
const SECRET = "unity-policy-secret-41c9";
const DAY = 86_400_000;
const GIB = 2 ** 30;
const WAIT = 60_000;
/** The plane's day: today (UTC), so the tables' partition dates are recent to it. */
const D = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const at = (day: number, hhmm = "03:00") => new Date(D + day * DAY + Date.parse(`1970-01-01T${hhmm}:00Z`));
const date = (day: number) => new Date(D + day * DAY).toISOString().slice(0, 10);
const clock = new OffsetClock(at(0, "01:00"));
const SCHEDULE = { frequency: "daily", time_utc: "03:00" } as const;
/** Kinds the policy engine queues besides the policy's runs (opportunity measurements). */
const MEASUREMENT = "opportunity_scan";

let unity: UnityCatalogServer;
let plane: TestPlane;
const children: ChildAgent[] = [];
const folders: Record<string, string> = {};
let tinyBytes = 0;

/** Registers the Delta table at `folder` in Unity as EXTERNAL `main.<schema>.<name>`. */
function register(schema: string, name: string, folder: string) {
  folders[`${schema}.${name}`] = folder;
  unity.state.putTable({
    catalog_name: "main",
    schema_name: schema,
    name,
    table_type: "EXTERNAL",
    data_source_format: "DELTA",
    storage_location: pathToFileURL(folder).href,
  });
}

beforeAll(async () => {
  unity = await startUnityCatalog({ clients: { lakesmith: SECRET } });
  const generated = async (schema: string, name: string, options: EventsTableOptions) => {
    const folder = join(root, name);
    const table = await writeEventsTable(folder, options);
    register(schema, name, folder);
    return table;
  };
  await generated("sales", "orders", { days: 3, filesPerDay: 3, rowsPerFile: 400, startDate: date(-3) });
  await generated("sales", "refunds", {
    days: 2,
    filesPerDay: 3,
    rowsPerFile: 300,
    startDate: date(-2),
    seed: 3,
  });
  tinyBytes = (
    await generated("hr", "tiny", { days: 1, filesPerDay: 1, rowsPerFile: 20, startDate: date(-1) })
  ).bytes;
  const people = join(root, "people");
  cpSync(join(DELTA_FIXTURES, "COVID-19_NYT"), people, { recursive: true });
  register("hr", "people", people);
  // Two old partitions (45 and 44 days back) and three recent ones, appended file by file.
  const events = await generated("ops", "events", {
    days: 2,
    filesPerDay: 2,
    rowsPerFile: 200,
    startDate: date(-45),
    seed: 5,
  });
  for (const day of [-3, -2, -1])
    for (const fileIndex of [0, 1]) await appendCommit(events.path, { day: date(day), rows: 150, fileIndex });

  plane = await startPlane({ clock, schedulerIntervalMs: 200 });
  await connectedCatalogAgent(plane, "policy-agent", root, unity.url, children, {
    LAKESMITH_AGENT_CONCURRENCY: "2",
  });
}, WAIT);
afterAll(async () => {
  expect(unity.validationErrors).toEqual([]);
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  await unity?.close();
  await rm(root, { recursive: true, force: true });
});

const ok = (method: string, path: string, body?: unknown, status = 200) =>
  apiOk(plane, method, path, body, status);

/** Until no job is queued, offered or running: the clock only moves then (`offset-clock.ts`). */
async function idle() {
  const active = ["queued", "offered", "running", "cancelling"] as const;
  await eventually(
    async () => {
      const rows = await plane.server.services.db
        .select({ id: jobs.id })
        .from(jobs)
        .where(inArray(jobs.status, [...active]));
      return rows.length === 0 ? true : undefined;
    },
    WAIT,
    "no active job",
  );
}

/** Moves the plane's clock to `when` once nothing runs. */
async function moveTo(when: Date) {
  await idle();
  clock.set(when);
}

interface Run {
  run_id: string;
  kind: string;
  trigger: string;
  job_trigger: string;
  status: string;
  created_at: string;
  result: Record<string, unknown> | null;
}

let main: string;
let connection: string;
const ids: Record<string, string> = {};
const base = (table: string) => `/api/v1/catalogs/${main}/tables/${encodeURIComponent(ids[table] as string)}`;
const detail = (table: string) =>
  ok("GET", `/api/v1/managedtables/${encodeURIComponent(ids[table] as string)}`);
/** The table's runs (not the engine's measurements), newest first, with the query's filters. */
async function runs(table: string, query = ""): Promise<Run[]> {
  const page = await ok("GET", `${base(table)}/runs?page_size=500${query}`);
  return (page.items as Run[]).filter((r) => r.kind !== MEASUREMENT);
}
/** Waits for the table's POLICY run of `kind` created at or after `since` to succeed. */
function policyRun(table: string, kind: string, since: Date): Promise<Run> {
  return eventually(
    async () => {
      const found = (await runs(table, `&trigger=POLICY&start=${since.toISOString()}`)).find(
        (r) => r.kind === kind,
      );
      if (found && ["FAILED", "CANCELLED"].includes(found.status))
        throw new Error(`${table}'s ${kind} run ended ${found.status}: ${JSON.stringify(found)}`);
      return found?.status === "SUCCEEDED" ? found : undefined;
    },
    WAIT,
    `${table}'s ${kind} run`,
  );
}
async function managedNames() {
  const page = await ok("GET", "/api/v1/managedtables?page_size=100");
  return (page.items as { full_name: string }[]).map((t) => t.full_name);
}
/** The table's latest opportunity measurement, taken now by an ad-hoc scan. */
async function measure(table: string) {
  await idle();
  const lake = (await detail(table)).lake_table_id as string;
  const scan = await ok("POST", `/api/v1/tables/${lake}/opportunities:scan`, undefined, 202);
  const job = await plane.waitForJob(scan.job_id, ["succeeded", "failed"], WAIT);
  expect(job.status, job.error ?? "").toBe("succeeded");
  return (await ok("GET", `/api/v1/tables/${lake}/opportunities`)).measurement;
}

const before: Record<string, DeltaRows> = {};
let catalogPolicy: string;
let prefixPolicy: string;
let tablePolicy: string;
let expirePolicy: string;
let dryRun: { partitions: { value: string }[]; files: { path: string }[] };

describe("policies end to end through a Unity catalog and a real agent", { timeout: 2 * WAIT }, () => {
  it("a catalog policy manages every table, a prefix policy overrides it, a table policy both; a small table waits, saying why", async () => {
    await ok("PUT", "/api/v1/config", {
      min_eligible_table_size_gb: 0,
      min_existence_days: 0,
      // Between the tiny table and the others: the tiny one is managed but does not qualify.
      min_qualifying_table_size_gb: (tinyBytes * 2) / GIB,
    });
    const created = await ok(
      "POST",
      "/api/v1/catalog-connections",
      {
        name: "unity",
        type: "workspace",
        workspace_url: unity.url,
        client_id: "lakesmith",
        client_secret: SECRET,
      },
      201,
    );
    connection = created.id;
    const sync = await ok("POST", `/api/v1/catalog-connections/${connection}/sync`, undefined, 202);
    const synced = await plane.waitForJob(sync.id, ["succeeded", "failed"], WAIT);
    expect(synced.status, synced.error ?? "").toBe("succeeded");
    const catalogs = (await ok("GET", "/api/v1/catalogs")).items as {
      catalog_id: string;
      connection_id: string;
    }[];
    main = catalogs.find((c) => c.connection_id === connection)?.catalog_id as string;
    const listed = (await ok("GET", `/api/v1/catalogs/${main}/tables?page_size=100`)).items as {
      table_id: string;
      full_name: string;
      size_bytes: number;
    }[];
    for (const t of listed) ids[t.full_name.slice("main.".length)] = t.table_id;
    expect(Object.keys(ids).sort()).toEqual([
      "hr.people",
      "hr.tiny",
      "ops.events",
      "sales.orders",
      "sales.refunds",
    ]);
    for (const t of listed.filter((t) => t.full_name !== "main.hr.tiny"))
      expect(t.size_bytes, t.full_name).toBeGreaterThan(tinyBytes * 2);
    for (const name of Object.keys(folders)) before[name] = await deltaRows(folders[name] as string, root);

    catalogPolicy = (
      await ok(
        "POST",
        `/api/v1/catalogs/${main}/policies`,
        { actions: { compact: {} }, schedule: SCHEDULE },
        201,
      )
    ).policy_id;
    expect(await managedNames()).toEqual([
      "main.hr.people",
      "main.hr.tiny",
      "main.ops.events",
      "main.sales.orders",
      "main.sales.refunds",
    ]);
    prefixPolicy = (
      await ok(
        "POST",
        `/api/v1/catalogs/${main}/policies?prefix=sales`,
        { actions: { compress: {} }, schedule: SCHEDULE },
        201,
      )
    ).policy_id;
    tablePolicy = (
      await ok(
        "POST",
        `${base("sales.orders")}/policies`,
        {
          actions: { improve_layout: { layout: { type: "zorder", columns: ["country", "customer_id"] } } },
          schedule: SCHEDULE,
        },
        201,
      )
    ).policy_id;
    const effective = async (table: string) => (await detail(table)).effective_policy_id;
    expect(await effective("hr.people")).toBe(catalogPolicy);
    expect(await effective("ops.events")).toBe(catalogPolicy);
    expect(await effective("sales.refunds")).toBe(prefixPolicy);
    expect(await effective("sales.orders")).toBe(tablePolicy);

    // The tiny table waits for qualification; the others are onboarded through the catalog.
    const tiny = await eventually(async () => {
      const d = await detail("hr.tiny");
      return d.waiting_reason ? d : undefined;
    }, WAIT);
    expect(tiny).toMatchObject({ state: "waiting", lake_table_id: null });
    expect(tiny.waiting_reason).toContain("min_qualifying_table_size_gb");
    for (const table of ["hr.people", "ops.events", "sales.orders", "sales.refunds"]) {
      const onboarded = await eventually(
        async () => {
          const d = await detail(table);
          if (d.lake_table?.onboarding_status === "failed") throw new Error(JSON.stringify(d.lake_table));
          return d.lake_table?.onboarding_status === "active" ? d : undefined;
        },
        WAIT,
        `${table} onboarded`,
      );
      expect(onboarded.type).toBe("delta");
    }
  });

  it("an action the table can't take is a 422 naming it", async () => {
    const res = await plane.api("POST", `${base("hr.people")}/policies`, {
      actions: { expire_partitions: { retention_days: 10 } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors[0].path).toBe("actions.expire_partitions");
  });

  let measured: { table_version: number; small_files: number; lone_small_files: number };
  it("runs nothing before the policy's time; at 03:00 each table's policy runs on its own, rows intact", async () => {
    measured = await measure("sales.orders");
    await moveTo(at(0, "01:02"));
    // The onboarded tables are active, due at the policy's time, and nothing ran yet.
    for (const table of ["hr.people", "ops.events", "sales.orders", "sales.refunds"])
      await eventually(
        async () => {
          const d = await detail(table);
          return d.state === "active" && d.next_run_at === at(0).toISOString() ? d : undefined;
        },
        WAIT,
        `${table} due at 03:00`,
      );
    for (const table of Object.keys(ids)) expect(await runs(table, "&trigger=POLICY"), table).toEqual([]);

    await moveTo(at(0));
    const done = {
      people: await policyRun("hr.people", "optimize", at(0)),
      events: await policyRun("ops.events", "optimize", at(0)),
      orders: await policyRun("sales.orders", "crunch", at(0)),
      refunds: await policyRun("sales.refunds", "crunch", at(0)),
    };
    for (const run of Object.values(done))
      expect(run).toMatchObject({ trigger: "POLICY", job_trigger: "policy" });
    const ordersJob = await plane.job(done.orders.run_id);
    expect((ordersJob as unknown as { payload: { layout: unknown } }).payload.layout).toEqual({
      type: "zorder",
      columns: ["country", "customer_id"],
    });
    await idle();
    // Every rewrite committed but people's (one file already: nothing to merge); no row changed.
    for (const table of ["hr.people", "ops.events", "sales.orders", "sales.refunds"]) {
      const after = await deltaRows(folders[table] as string, root);
      if (table !== "hr.people")
        expect(after.version, table).toBeGreaterThan((before[table] as DeltaRows).version);
      expect(after.partitions, table).toEqual((before[table] as DeltaRows).partitions);
    }
    // Rewrites of the recent partitions only: orders' 9 files are 3, one per day.
    expect((await deltaRows(folders["sales.orders"] as string, root)).files).toBe(3);
    expect(await runs("hr.tiny")).toEqual([]);
  });

  it("opportunities change when the data changes", async () => {
    const after = await measure("sales.orders");
    expect(after.table_version).toBeGreaterThan(measured.table_version);
    // Files under the target size, counted apart when alone in their partition: 9, then 3 alone.
    expect(measured.small_files + measured.lone_small_files).toBe(9);
    expect(after).toMatchObject({ small_files: 0, lone_small_files: 3 });
  });

  it("an ad-hoc action, a rerun and a retry show trigger ACTION beside the POLICY runs", async () => {
    const action = await ok("POST", `${base("hr.people")}/actions`, { action: "compress" }, 202);
    const job = await plane.waitForJob(action.action_id, ["succeeded", "failed"], WAIT);
    expect(job.status, job.error ?? "").toBe("succeeded");
    const [policyRunOfPeople] = await runs("hr.people", "&trigger=POLICY");
    const rerun = await ok("POST", `${base("hr.people")}/runs/${policyRunOfPeople?.run_id}`, undefined, 202);
    expect(rerun).toMatchObject({ kind: "optimize", trigger: "ACTION" });
    const again = await plane.waitForJob(rerun.run_id, ["succeeded", "failed"], WAIT);
    expect(again.status, again.error ?? "").toBe("succeeded");
    // A retry: an action scheduled an hour ahead, cancelled, is retried now and runs.
    const later = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const scheduled = await ok(
      "POST",
      `${base("hr.people")}/actions`,
      { action: "compact", schedule: { at: later } },
      202,
    );
    expect(scheduled.status).toBe("SCHEDULED");
    await ok("POST", `/api/v1/jobs/${scheduled.action_id}/cancel`, undefined, 202);
    const retried = await ok("POST", `${base("hr.people")}/actions/${scheduled.action_id}`, undefined, 202);
    expect(retried.action_id).not.toBe(scheduled.action_id);
    const retriedJob = await plane.waitForJob(retried.action_id, ["succeeded", "failed"], WAIT);
    expect(retriedJob.status, retriedJob.error ?? "").toBe("succeeded");
    const adhoc = await runs("hr.people", "&trigger=ACTION");
    expect(adhoc.map((r) => [r.kind, r.status])).toEqual([
      ["optimize", "SUCCEEDED"],
      ["optimize", "CANCELLED"],
      ["optimize", "SUCCEEDED"],
      ["crunch", "SUCCEEDED"],
      ["onboarding", "SUCCEEDED"],
    ]);
    expect((await runs("hr.people", "&trigger=POLICY")).map((r) => r.run_id)).toEqual([
      policyRunOfPeople?.run_id,
    ]);
  });

  it("previews a partition expiration: the dry run lists the old partitions and deletes nothing", async () => {
    expirePolicy = (
      await ok(
        "POST",
        `${base("ops.events")}/policies`,
        { enabled: false, actions: { expire_partitions: { retention_days: 10 } }, schedule: SCHEDULE },
        201,
      )
    ).policy_id;
    const preview = `/api/v1/catalogs/${main}/policies/${expirePolicy}`;
    const started = await ok("POST", `${preview}:preview`, undefined, 202);
    expect(started.tables.map((t: { full_name: string }) => t.full_name)).toEqual(["main.ops.events"]);
    const versionBefore = (await deltaRows(folders["ops.events"] as string, root)).version;
    const entry = await eventually(
      async () => {
        const [table] = (await ok("GET", `${preview}/preview`)).tables;
        const [deletes] = table.deletes;
        if (deletes.status === "failed") throw new Error(JSON.stringify(deletes));
        return deletes.status === "succeeded" ? deletes : undefined;
      },
      WAIT,
      "the dry run",
    );
    expect(entry.action).toBe("expire_partitions");
    dryRun = entry.result;
    expect(dryRun.partitions.map((p) => p.value).sort()).toEqual([date(-45), date(-44)]);
    expect(dryRun.files).toHaveLength(4);
    expect((await deltaRows(folders["ops.events"] as string, root)).version).toBe(versionBefore);
    // Disabled, it is nobody's effective policy yet.
    expect((await detail("ops.events")).effective_policy_id).toBe(catalogPolicy);
  });

  it("enabled, the expiration runs at the policy's time and deletes exactly what the preview listed; a disabled policy's table runs nothing", async () => {
    await ok("POST", `/api/v1/catalogs/${main}/policies/${expirePolicy}:enable`);
    expect((await detail("ops.events")).effective_policy_id).toBe(expirePolicy);
    await ok("POST", `/api/v1/catalogs/${main}/policies/${catalogPolicy}:disable`);
    expect(await detail("hr.people")).toMatchObject({ state: "disabled", effective_policy_id: null });
    expect(await managedNames()).toContain("main.hr.people");

    await moveTo(at(1));
    const expired = await policyRun("ops.events", "partition_expiration", at(1));
    // The sales tables ran at the same time: the tick passed, and the disabled table got nothing.
    await policyRun("sales.orders", "crunch", at(1));
    await policyRun("sales.refunds", "crunch", at(1));
    expect(await runs("hr.people", `&trigger=POLICY&start=${at(1).toISOString()}`)).toEqual([]);
    // The run's result lists the partitions; its files are the pending deletions it recorded.
    const result = expired.result as typeof dryRun & { committed_version: number; files_count: number };
    expect(result.partitions).toEqual(dryRun.partitions);
    expect(result.files_count).toBe(dryRun.files.length);
    expect(result.committed_version).toBeGreaterThan(0);
    const lake = (await detail("ops.events")).lake_table_id;
    const pending = (await ok("GET", `/api/v1/pending-deletions?table_id=${lake}&limit=100`)).items as {
      path: string;
      source_job_id: string;
    }[];
    expect(pending.every((p) => p.source_job_id === expired.run_id)).toBe(true);
    expect(pending.map((p) => p.path.split("/").pop()).sort()).toEqual(
      dryRun.files.map((f) => f.path.split("/").pop()).sort(),
    );
    await idle();
    const left = await deltaRows(folders["ops.events"] as string, root);
    const kept = Object.fromEntries(
      Object.entries((before["ops.events"] as DeltaRows).partitions).filter(
        ([key]) => !dryRun.partitions.some((p) => key.includes(p.value)),
      ),
    );
    expect(Object.keys(kept)).toHaveLength(3);
    expect(left.partitions).toEqual(kept);
  });

  it("a table a later sync adds under a prefix policy is picked up", async () => {
    const returns = join(root, "returns");
    await writeEventsTable(returns, { days: 1, filesPerDay: 1, rowsPerFile: 20, startDate: date(-1) });
    register("sales", "returns", returns);
    const sync = await ok("POST", `/api/v1/catalog-connections/${connection}/sync`, undefined, 202);
    const synced = await plane.waitForJob(sync.id, ["succeeded", "failed"], WAIT);
    expect(synced.status, synced.error ?? "").toBe("succeeded");
    const listed = (await ok("GET", `/api/v1/catalogs/${main}/tables?page_size=100`)).items as {
      table_id: string;
      full_name: string;
    }[];
    ids["sales.returns"] = listed.find((t) => t.full_name === "main.sales.returns")?.table_id as string;
    const picked = await eventually(
      async () => {
        const res = await plane.api(
          "GET",
          `/api/v1/managedtables/${encodeURIComponent(ids["sales.returns"] as string)}`,
        );
        return res.status === 200 ? res.body : undefined;
      },
      WAIT,
      "the new table managed",
    );
    expect(picked).toMatchObject({ effective_policy_id: prefixPolicy });
  });

  it("the catalog's emergency stop and the global one halt new runs", async () => {
    await ok("PUT", `/api/v1/catalogs/${main}/policy-stop`, { paused: true });
    expect(await detail("sales.orders")).toMatchObject({ state: "paused", paused: { catalog: true } });
    await moveTo(at(2));
    // The tick looked at the table (it is due at the next occurrence) and queued nothing.
    const nextDay = async (day: number) =>
      eventually(
        async () => ((await detail("sales.orders")).next_run_at === at(day).toISOString() ? true : undefined),
        WAIT,
      );
    await nextDay(3);
    for (const table of Object.keys(ids))
      expect(await runs(table, `&trigger=POLICY&start=${at(2).toISOString()}`), table).toEqual([]);
    await ok("PUT", `/api/v1/catalogs/${main}/policy-stop`, { paused: false });

    await ok("PUT", "/api/v1/config", { policy_engine_paused: true });
    expect(await detail("sales.orders")).toMatchObject({
      state: "paused",
      paused: { global: true, catalog: false },
    });
    await moveTo(at(3));
    await nextDay(4);
    for (const table of Object.keys(ids))
      expect(await runs(table, `&trigger=POLICY&start=${at(3).toISOString()}`), table).toEqual([]);
    await ok("PUT", "/api/v1/config", { policy_engine_paused: false });
    expect((await detail("sales.orders")).state).toBe("active");
  });

  it("deleting a table's last policy makes it unmanaged", async () => {
    await ok("DELETE", `/api/v1/catalogs/${main}/policies/${catalogPolicy}`, undefined, 204);
    expect(await managedNames()).toEqual([
      "main.ops.events",
      "main.sales.orders",
      "main.sales.refunds",
      "main.sales.returns",
    ]);
    for (const table of ["hr.people", "hr.tiny"])
      expect(
        (await plane.api("GET", `/api/v1/managedtables/${encodeURIComponent(ids[table] as string)}`)).status,
      ).toBe(404);
    expect((await detail("sales.refunds")).effective_policy_id).toBe(prefixPolicy);
  });
});
