/**
 * Optimus end to end (issue 22): a loopback Unity Catalog holding two EXTERNAL Delta tables on
 * `file://`, a control plane ticking its own scheduler, and a `lakesmith-agent` child process
 * allowed the tables, the workspace and the query logs. The workloads are generated SQL logs whose
 * best layout is known:
 *
 * - `main.lake.clicks` (8 files of ~2.4 MB, rows in no order): one dominant filter, a one-day range
 *   on `event_ts` (90% of the bytes), so a linear sort on `event_ts` is recommended.
 * - `main.lake.points` (4 files of ~4.4 MB, rows in no order): two balanced selective filters, short
 *   ranges on `a` and on `b`, half the bytes each, so a Z-order over `a` and `b` is recommended.
 *
 * Both Lakesmith tables write 2 MB files: each is scored in the files a crunch's sorted rewrite
 * would write (half its bytes over the target: 4 for points), which is what the crunch then writes.
 *
 * Then, through the API only: a dismissed recommendation can't be applied and the next run
 * recommends again; applying with `run_now` writes the layout into the table's own policy and
 * crunches the table in it; the next run measures the logged queries against the new files'
 * statistics, at least 90% of the predicted skipping on each day; revert gives the table its
 * inherited policy back and the metrics keep the marker.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUnityCatalog, type UnityCatalogServer } from "../agent/test/support/unity-catalog.ts";
import type { ChildAgent } from "./support/agents.ts";
import { writeFlatDeltaTable } from "./support/flat-delta.ts";
import { apiOk, connectedCatalogAgent, eventually, startPlane, type TestPlane } from "./support/plane.ts";

const root = mkdtempSync(join(tmpdir(), "optimus-e2e-"));
const SECRET = "unity-optimus-secret-7d21";
const WAIT = 120_000;
const DAY = 86_400_000;
const MB = 2 ** 20;
const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
const dayOf = (offset: number) => new Date(today + offset * DAY).toISOString().slice(0, 10);
/** Clicks span 28 days of October 2026. */
const CLICKS_START = Date.parse("2026-10-01T00:00:00Z");

let unity: UnityCatalogServer;
let plane: TestPlane;
const children: ChildAgent[] = [];

function register(name: string, folder: string) {
  unity.state.putTable({
    catalog_name: "main",
    schema_name: "lake",
    name,
    table_type: "EXTERNAL",
    data_source_format: "DELTA",
    storage_location: pathToFileURL(folder).href,
  });
}

/** One SQL-log record per query, on the days before today (the run's lookback window). */
function writeLogs(folder: string) {
  const records: object[] = [];
  let n = 0;
  const log = (statement: string, bytes: number, day: number) =>
    records.push({
      query_id: `q${++n}`,
      statement,
      bytes_scanned: bytes,
      start_time: new Date(today - day * DAY + (n % 20) * 3_600_000).toISOString(),
      application: "dashboards",
    });
  for (let q = 0; q < 36; q++) {
    const from = new Date(CLICKS_START + (q % 28) * DAY).toISOString().slice(0, 19).replace("T", " ");
    const to = new Date(CLICKS_START + ((q % 28) + 1) * DAY).toISOString().slice(0, 19).replace("T", " ");
    log(
      `SELECT count(*) FROM main.lake.clicks WHERE event_ts >= TIMESTAMP '${from}' AND event_ts < TIMESTAMP '${to}'`,
      900 * MB,
      1 + (q % 3),
    );
  }
  for (let q = 0; q < 4; q++)
    log(`SELECT * FROM main.lake.clicks WHERE user_id = ${1000 + q}`, 100 * MB, 1 + (q % 3));
  for (let q = 0; q < 24; q++) {
    const lo = 150 + q * 400;
    const column = q % 2 === 0 ? "a" : "b";
    log(
      `SELECT sum(length(payload)) FROM main.lake.points p WHERE p.${column} BETWEEN ${lo} AND ${lo + 299}`,
      500 * MB,
      1 + (q % 3),
    );
  }
  // Lakesmith's own reads never count.
  log("SELECT * FROM main.lake.points WHERE a = 1", 10_000 * MB, 1);
  (records.at(-1) as Record<string, unknown>).application = "lakesmith-agent";
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, "queries.jsonl"), `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
}

beforeAll(async () => {
  unity = await startUnityCatalog({ clients: { lakesmith: SECRET } });
  // 64 random bytes a row: the files' size barely changes when a crunch sorts and recompresses
  // them, so the rewrite writes as many files as the scoring's pseudo-files (bytes / 16 MB).
  const payload = (f: number) => {
    const key = `(${f} * 10000000 + i)::varchar`;
    return `unhex(md5(${key}) || md5(${key} || 'b') || md5(${key} || 'c') || md5(${key} || 'd')) as payload`;
  };
  await writeFlatDeltaTable(join(root, "points"), {
    columns: [
      ["a", "integer"],
      ["b", "integer"],
      ["payload", "binary"],
    ],
    files: 4,
    select: (f) =>
      `select (hash(i, ${f}, 1) % 10000)::integer as a, (hash(i, ${f}, 2) % 10000)::integer as b, ${payload(f)}
       from range(60000) t(i)`,
  });
  await writeFlatDeltaTable(join(root, "clicks"), {
    columns: [
      ["event_ts", "timestamp"],
      ["user_id", "long"],
      ["payload", "binary"],
    ],
    files: 8,
    select: (f) =>
      `select (timestamptz '2026-10-01 00:00:00+00' + to_microseconds((hash(i, ${f}, 3) % ${28 * DAY * 1000})::bigint)) as event_ts,
              (hash(i, ${f}, 4) % 100000)::bigint as user_id, ${payload(f + 100)}
       from range(30000) t(i)`,
  });
  register("points", join(root, "points"));
  register("clicks", join(root, "clicks"));
  writeLogs(join(root, "logs"));
  plane = await startPlane({ schedulerIntervalMs: 200 });
  await connectedCatalogAgent(plane, "optimus-agent", root, unity.url, children, {
    LAKESMITH_AGENT_CONCURRENCY: "2",
    LAKESMITH_AGENT_MEMORY_LIMIT_MB: "768",
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

interface Layout {
  type: "linear" | "zorder";
  columns: string[];
}
interface Recommendation {
  id: string;
  run_id: string;
  table_fqn: string;
  layout: Layout;
  expected_skip_fraction: number;
  current_skip_fraction: number;
  status: string;
  queries: { predicates: { column: string }[]; queries: number; examples: string[] }[];
  evidence: { candidates: { layout: Layout | null; skip_fraction: number }[]; pseudo_files: number };
}

let submission: string;
let catalog: string;
const managedIds: Record<string, string> = {};

/** Waits for the submission's newest run to succeed and its tables to be scored; returns the run id. */
async function nextRunScored(previous: string | null): Promise<string> {
  let seen: unknown;
  const run = await eventually(
    async () => {
      const detail = await ok("GET", `/api/v1/optimus/runs/${submission}`);
      seen = detail;
      const latest = detail.latest_run;
      if (!latest || latest.job_id === previous) return undefined;
      if (latest.status === "failed") throw new Error(`run failed: ${JSON.stringify(latest)}`);
      return latest.status === "succeeded" ? (latest.job_id as string) : undefined;
    },
    WAIT,
    "the run to succeed",
  ).catch(async (err) => {
    const jobs = await ok("GET", "/api/v1/jobs?page_size=20");
    throw new Error(`${err}: ${JSON.stringify(seen)} ${JSON.stringify(jobs.items)}`);
  });
  // Its scoring jobs: one per table with a workload, all ended.
  await eventually(
    async () => {
      const page = await ok("GET", `/api/v1/jobs?kind=layout_scoring&page_size=100`);
      const mine = (page.items as { status: string; payload: { run_id: string } }[]).filter(
        (j) => j.payload?.run_id === run,
      );
      const failed = mine.find((j) => j.status === "failed");
      if (failed) throw new Error(`scoring failed: ${JSON.stringify(failed)}`);
      return mine.length === 2 && mine.every((j) => j.status === "succeeded") ? true : undefined;
    },
    WAIT,
    "the run's two scoring jobs",
  );
  return run;
}

async function recommendations(): Promise<Record<string, Recommendation>> {
  const page = await ok("GET", `/api/v1/optimus/runs/${submission}/recommendations`);
  return Object.fromEntries((page.items as Recommendation[]).map((r) => [r.table_fqn, r]));
}

describe("Optimus end to end through a Unity catalog and a real agent", { timeout: 4 * WAIT }, () => {
  let firstRun: string;
  let points: Recommendation;

  it("manages the tables under a catalog policy, then recommends the known best layouts from the logs", async () => {
    await ok("PUT", "/api/v1/config", {
      min_eligible_table_size_gb: 0,
      min_existence_days: 0,
      min_qualifying_table_size_gb: 0,
    });
    const connection = (
      await ok(
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
      )
    ).id;
    const sync = await ok("POST", `/api/v1/catalog-connections/${connection}/sync`, undefined, 202);
    expect((await plane.waitForJob(sync.id, ["succeeded", "failed"], WAIT)).status).toBe("succeeded");
    catalog = ((await ok("GET", "/api/v1/catalogs")).items as { catalog_id: string }[])[0]
      ?.catalog_id as string;
    // A schedule far from now: the policy's own runs stay out of the way.
    const later = new Date(Date.now() + 8 * 3_600_000).toISOString().slice(11, 16);
    await ok(
      "POST",
      `/api/v1/catalogs/${catalog}/policies`,
      {
        actions: { compact: {} },
        schedule: { frequency: "daily", time_utc: later },
      },
      201,
    );
    // The engine onboards both tables (their Lakesmith tables are what Optimus maps scans to).
    const lake = await eventually(
      async () => {
        const page = await ok("GET", "/api/v1/managedtables?page_size=10");
        const items = page.items as { table_id: string; full_name: string; lake_table_id: string | null }[];
        for (const t of items) managedIds[t.full_name] = t.table_id;
        return items.length === 2 && items.every((t) => t.lake_table_id) ? items : undefined;
      },
      WAIT,
      "both tables onboarded",
    );
    for (const t of lake) await ok("PUT", `/api/v1/tables/${t.lake_table_id}`, { target_file_size_mb: 2 });

    const created = await ok(
      "POST",
      "/api/v1/optimus/runs",
      {
        name: "dashboards",
        engine: "sql",
        query_logs_uri: pathToFileURL(join(root, "logs")).href,
        lookback_days: 7,
        daily_sync_time_utc: "23:59",
        active: true,
      },
      201,
    );
    submission = created.id;
    firstRun = await nextRunScored(null);
    const detail = await ok("GET", `/api/v1/optimus/runs/${submission}`);
    expect(detail.latest_run.result).toMatchObject({
      own_queries_skipped: 1,
      tables: 2,
      queries_in_window: 65,
    });

    const recs = await recommendations();
    const scorings = (await ok("GET", "/api/v1/jobs?kind=layout_scoring&page_size=10")).items;
    const why = JSON.stringify(scorings.map((j: { result: unknown }) => j.result));
    expect(Object.keys(recs).sort(), why).toEqual(["main.lake.clicks", "main.lake.points"]);
    const clicks = recs["main.lake.clicks"] as Recommendation;
    expect(clicks.layout).toEqual({ type: "linear", columns: ["event_ts"] });
    expect(clicks.expected_skip_fraction).toBeGreaterThan(clicks.current_skip_fraction + 0.5);
    expect(clicks.queries[0]?.predicates.map((p) => p.column)).toEqual(["event_ts", "event_ts"]);
    points = recs["main.lake.points"] as Recommendation;
    expect(points.layout.type).toBe("zorder");
    expect([...points.layout.columns].sort()).toEqual(["a", "b"]);
    expect(points.evidence.pseudo_files).toBe(4);
    // Z-order beats every linear sort: a sort on either column helps only half the bytes.
    const linear = points.evidence.candidates.filter((c) => c.layout?.type === "linear");
    expect(linear.length).toBeGreaterThan(0);
    for (const c of linear) expect(points.expected_skip_fraction).toBeGreaterThan(c.skip_fraction);
    expect(points.run_id).toBe(firstRun);
  });

  it("a dismissed recommendation can't be applied; the next run recommends again", async () => {
    const dismissed = await ok("POST", `/api/v1/optimus/recommendations/${points.id}/dismiss`);
    expect(dismissed.status).toBe("dismissed");
    await ok("POST", `/api/v1/optimus/recommendations/${points.id}/apply`, {}, 409);
    await ok("POST", `/api/v1/optimus/runs/${submission}/sync-now`, undefined, 202);
    const second = await nextRunScored(firstRun);
    const again = (await recommendations())["main.lake.points"] as Recommendation;
    expect(again.run_id).toBe(second);
    expect(again.status).toBe("open");
    expect(again.layout).toEqual(points.layout);
    points = again;
  });

  let applied: { recommendation: Recommendation; run_now: { job_id: string | null; error: string | null } };
  let thirdRun: string;

  it("applying writes the layout into the table's own policy and crunches the table in it; measured skipping meets the prediction", async () => {
    applied = await ok("POST", `/api/v1/optimus/recommendations/${points.id}/apply`, { run_now: true });
    expect(applied.run_now.error).toBeNull();
    const crunch = await plane.waitForJob(applied.run_now.job_id as string, ["succeeded", "failed"], WAIT);
    expect(crunch.status, crunch.error ?? "").toBe("succeeded");
    // As many files as the scoring simulated: the crunch's sorted rewrite sized them alike.
    expect(crunch.result).toMatchObject({ files_after: points.evidence.pseudo_files });
    const table = await ok(
      "GET",
      `/api/v1/managedtables/${encodeURIComponent(managedIds["main.lake.points"] as string)}`,
    );
    expect(JSON.stringify(table)).toContain('"zorder"');

    await ok("POST", `/api/v1/optimus/runs/${submission}/sync-now`, undefined, 202);
    thirdRun = await nextRunScored(points.run_id);
    const metrics = await ok(
      "GET",
      `/api/v1/optimus/runs/${submission}/tables/${encodeURIComponent("main.lake.points")}/metrics?days=7`,
    );
    const measuredDays = (
      metrics.days as {
        day: string;
        measured_skip_fraction: number | null;
        predicted_skip_fraction: number | null;
        run_id: string;
      }[]
    ).filter((d) => d.run_id === thirdRun);
    expect(measuredDays.map((d) => d.day).sort()).toEqual([dayOf(-3), dayOf(-2), dayOf(-1)]);
    for (const d of measuredDays) {
      expect(d.predicted_skip_fraction, d.day).toBeCloseTo(points.expected_skip_fraction, 6);
      expect(d.measured_skip_fraction ?? 0, d.day).toBeGreaterThanOrEqual(
        0.9 * (d.predicted_skip_fraction ?? 1),
      );
    }
    expect(metrics.markers).toEqual([
      expect.objectContaining({ recommendation_id: points.id, layout: points.layout, reverted_at: null }),
    ]);
  });

  it("revert gives the table its inherited policy back; the marker says when", async () => {
    const reverted = await ok("POST", `/api/v1/optimus/recommendations/${points.id}/revert`);
    expect(reverted.policy_change).toBe("deleted");
    expect(reverted.recommendation.status).toBe("reverted");
    const table = await ok(
      "GET",
      `/api/v1/managedtables/${encodeURIComponent(managedIds["main.lake.points"] as string)}`,
    );
    expect(JSON.stringify(table)).not.toContain('"zorder"');
    const metrics = await ok(
      "GET",
      `/api/v1/optimus/runs/${submission}/tables/${encodeURIComponent("main.lake.points")}/metrics?days=7`,
    );
    expect(metrics.markers[0]?.reverted_at).not.toBeNull();
  });
});
