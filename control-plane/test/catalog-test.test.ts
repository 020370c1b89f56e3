/**
 * `POST /api/v1/catalog-connections/test` and `GET .../test/{job_id}`: the answer within the wait
 * (200), the job to poll (202), nobody to ask (503 at once, naming the endpoints and what the
 * connected agents may reach), the 422s of the credentials, and the credentials: on the job row
 * only until it ends, never in an answer; a test no agent takes is cancelled after 10 minutes.
 */
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_TTL_MS } from "../src/catalog-connections/scheduled.ts";
import { startTestPlane, type TestPlane } from "./harness.ts";
import {
  ALL_SECRETS,
  adminJson,
  fail,
  HIVE,
  POLARIS,
  rawRow,
  succeed,
  testResult,
  WORKSPACE,
  WORKSPACE_SECRET,
} from "./support/catalogs.ts";
import { connectedAgent } from "./support/connected-agent.ts";

const TEST = "/api/v1/catalog-connections/test";
const ENDPOINTS = [
  "https://dbc-1.cloud.databricks.com",
  "thrift://hms.internal:9083",
  "https://polaris.example.com",
  "https://auth.example.com",
];

function expectNoSecret(text: string) {
  for (const secret of ALL_SECRETS) expect(text).not.toContain(secret);
}

/** The id of the only catalog test job, once the request has queued it. */
async function queuedTest(p: TestPlane): Promise<string> {
  for (;;) {
    const page = await p.services.jobs.list({ kinds: ["catalog_test"] }, 0, 1);
    if (page.items[0] && page.items[0].status === "queued") return page.items[0].id;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("with no answer within the wait", () => {
  const clock = new ManualClock(new Date("2026-06-01T09:00:00Z"));
  let plane: TestPlane;
  let admin: ReturnType<typeof adminJson>;
  let agent: { seen(): Promise<void> };
  beforeAll(async () => {
    plane = await startTestPlane({ clock });
    admin = adminJson(plane);
    agent = await connectedAgent(plane, { kinds: ["catalog_test", "catalog_sync"], endpoints: ENDPOINTS });
  });
  afterAll(() => plane.close());
  const ask = async (body: unknown) => {
    await agent.seen();
    return admin("POST", TEST, body);
  };

  it("answers 202 with the job to poll, then the answer at GET .../test/{job_id}", async () => {
    const res = await ask(WORKSPACE);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(/^job_/),
      status: "queued",
      ok: null,
      catalogs: [],
      message: null,
      duration_ms: null,
      endpoints: ["https://dbc-1.cloud.databricks.com:443"],
    });
    const id = res.body.job_id;
    // The agent needs the secret: it is on the row while the job waits, in no view.
    expect(await rawRow(plane, "jobs", id)).toContain(WORKSPACE_SECRET);
    expectNoSecret((await admin("GET", `/api/v1/jobs/${id}`)).text);
    expectNoSecret((await admin("GET", "/api/v1/jobs?kind=catalog_test")).text);
    const pending = await admin("GET", `${TEST}/${id}`);
    expect(pending.body).toMatchObject({ status: "queued", ok: null });
    await succeed(plane, id, testResult());
    const answered = await admin("GET", `${TEST}/${id}`);
    expect(answered.status).toBe(200);
    expect(answered.body).toMatchObject({
      status: "succeeded",
      ok: true,
      catalogs: ["main", "samples"],
      message: null,
      duration_ms: 87,
    });
    expectNoSecret(await rawRow(plane, "jobs", id));
  });

  it("stores no connection", async () => {
    await ask(HIVE);
    expect((await admin("GET", "/api/v1/catalog-connections")).body.total).toBe(0);
  });

  it("answers 404 at GET .../test/{job_id} for a job that is not a connection test", async () => {
    expect((await admin("GET", `${TEST}/job_missing`)).status).toBe(404);
    const sync = await plane.services.jobs.enqueue({ kind: "noop", payload: {} });
    expect((await admin("GET", `${TEST}/${sync.job.id}`)).status).toBe(404);
  });

  it.each([
    ["a field of another type", { ...WORKSPACE, password: "p" }, ["password"]],
    ["a missing URL", { type: "polaris", client_id: "a", client_secret: "b" }, ["catalog_url"]],
    ["a bad metastore URI", { type: "hive_metastore", metastore_uri: "hms:9083" }, ["metastore_uri"]],
    ["no type", { workspace_url: WORKSPACE.workspace_url }, ["type"]],
  ])("refuses %s with 422 naming the fields, and queues nothing", async (_what, body, fields) => {
    const before = (await plane.services.jobs.list({ kinds: ["catalog_test"] }, 0, 1)).total;
    const res = await ask(body);
    expect(res.status).toBe(422);
    expect([...new Set(res.body.errors.map((e: { path: string }) => e.path))].sort()).toEqual(fields);
    expect((await plane.services.jobs.list({ kinds: ["catalog_test"] }, 0, 1)).total).toBe(before);
    expectNoSecret(res.text);
  });

  it("cancels a test no agent took within 10 minutes, purging its credentials", async () => {
    const res = await ask(POLARIS);
    const id = res.body.job_id;
    clock.advance(TEST_TTL_MS - 1000);
    expect((await plane.services.scheduler.tick()).catalogs.expiredTests).toBe(0);
    clock.advance(2000);
    expect((await plane.services.scheduler.tick()).catalogs.expiredTests).toBeGreaterThanOrEqual(1);
    const answer = await admin("GET", `${TEST}/${id}`);
    expect(answer.body).toMatchObject({ status: "cancelled", ok: false });
    expect(answer.body.message).toContain("cancelled");
    expectNoSecret(await rawRow(plane, "jobs", id));
  });
});

describe("with an answer within the wait", () => {
  let plane: TestPlane;
  let admin: ReturnType<typeof adminJson>;
  beforeAll(async () => {
    plane = await startTestPlane({ leaseTimings: { preflightWaitMs: 60_000 } });
    admin = adminJson(plane);
    await connectedAgent(plane, { kinds: ["catalog_test"], endpoints: ENDPOINTS });
  });
  afterAll(() => plane.close());

  it("answers 200 with the catalogs the agent listed", async () => {
    const asked = admin("POST", TEST, POLARIS);
    const id = await queuedTest(plane);
    await succeed(plane, id, testResult({ catalogs: ["analytics"], duration_ms: 12 }));
    const res = await asked;
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      job_id: id,
      status: "succeeded",
      ok: true,
      catalogs: ["analytics"],
      message: null,
      duration_ms: 12,
      endpoints: ["https://polaris.example.com:443", "https://auth.example.com:443"],
    });
    expectNoSecret(await rawRow(plane, "jobs", id));
  });

  it("answers 200 with ok false and the catalog's words when it refused the credentials", async () => {
    const asked = admin("POST", TEST, WORKSPACE);
    const id = await queuedTest(plane);
    await succeed(
      plane,
      id,
      testResult({ ok: false, catalogs: [], message: "401: invalid client credentials" }),
    );
    const res = await asked;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: false, message: "401: invalid client credentials" });
  });

  it("answers 200 with ok false and the error when the job failed", async () => {
    const asked = admin("POST", TEST, HIVE);
    const id = await queuedTest(plane);
    await fail(plane, id, "this agent version has no Hive Metastore client");
    const res = await asked;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "failed",
      ok: false,
      message: "this agent version has no Hive Metastore client",
    });
    expectNoSecret(await rawRow(plane, "jobs", id));
  });
});

describe("when no connected agent may run it", () => {
  let plane: TestPlane;
  let admin: ReturnType<typeof adminJson>;
  beforeAll(async () => {
    plane = await startTestPlane();
    admin = adminJson(plane);
  });
  afterAll(() => plane.close());

  const refused = async (body: unknown) => {
    const res = await admin("POST", TEST, body);
    expect(res.status).toBe(503);
    expect((await plane.services.jobs.list({ kinds: ["catalog_test"] }, 0, 1)).total).toBe(0);
    expectNoSecret(res.text);
    return res.body.detail as string;
  };

  it("answers 503 at once while no agent runs catalog tests, naming the endpoint, and queues nothing", async () => {
    await connectedAgent(plane, { name: "tables-only", kinds: ["crunch"], endpoints: ENDPOINTS });
    const detail = await refused(WORKSPACE);
    expect(detail).toContain("https://dbc-1.cloud.databricks.com:443");
    expect(detail).toContain("no connected agent runs catalog connection tests");
    expect(detail).toContain("--allow-endpoints");
    expect(detail).toContain("nothing was queued");
  });

  it("answers 503 naming what the connected agents may reach, and 202 once one may reach every endpoint", async () => {
    await connectedAgent(plane, {
      name: "catalog-agent",
      kinds: ["catalog_test"],
      endpoints: ["https://polaris.example.com"],
    });
    // The token URL is on another host, which this agent may not reach.
    const detail = await refused(POLARIS);
    expect(detail).toContain("catalog-agent: https://polaris.example.com:443");
    expect(detail).toContain("https://auth.example.com:443");
    await connectedAgent(plane, { name: "both", kinds: ["catalog_test"], endpoints: ENDPOINTS });
    expect((await admin("POST", TEST, POLARIS)).status).toBe(202);
  });
});
