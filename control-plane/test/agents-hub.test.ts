/**
 * The agent protocol against a real Node control plane: real WebSockets, a real libSQL file, the
 * real hub and job service. The agent side is driven by hand (support/agent-client.ts) so each
 * test sends exactly the frames it means, including the ones a well-behaved agent never sends.
 * Time is a manual clock; the reaper is called directly where the scheduler tick would call it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@lakesmith/shared";
import { CLOSE } from "@lakesmith/shared/protocol";
import { sql } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type NodeServer, startNodeServer } from "../src/adapter/node-server.ts";
import { type AgentSocket, LocalHub } from "../src/agents/hub.ts";
import { connectAgent, hello, type TestAgentSocket } from "./support/agent-client.ts";
import { expirationResult } from "./support/deletions.ts";

const ADMIN_KEY = `lsk_${"h".repeat(40)}`;
const TIMINGS = {
  leaseMs: 60_000,
  offerTimeoutMs: 10_000,
  heartbeatMs: 20_000,
  retryBaseMs: 1_000,
  // The agents here answer a validate at once; a long wait keeps the 200 independent of the machine's speed.
  preflightWaitMs: 60_000,
};

let dir: string;
let clock: ManualClock;
let plane: NodeServer;
const sockets: TestAgentSocket[] = [];

async function start(): Promise<NodeServer> {
  return startNodeServer({
    dbUrl: `file:${join(dir, "plane.db")}`,
    port: 0,
    clock,
    leaseTimings: TIMINGS,
    bootstrap: { adminPassword: "hub-test-admin-password", adminApiKey: ADMIN_KEY },
  });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "lakesmith-hub-"));
  clock = new ManualClock(new Date());
  plane = await start();
});

afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await plane.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, path: string, body?: unknown, token = ADMIN_KEY) {
  const res = await fetch(`${plane.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function newAgentToken(name = "test-agent"): Promise<{ id: string; token: string }> {
  const res = await api("POST", "/api/v1/agents", { name });
  expect(res.status).toBe(201);
  return res.body;
}

async function connect(token: string, overrides: Record<string, unknown> = {}) {
  const socket = await connectAgent(plane.url, token);
  sockets.push(socket);
  socket.send(hello(overrides));
  const welcome = await socket.next("welcome");
  return { socket, welcome };
}

async function enqueue(body: Record<string, unknown>): Promise<string> {
  const res = await api("POST", "/api/v1/jobs", body);
  expect(res.status).toBe(201);
  return res.body.id;
}

async function job(id: string) {
  const res = await api("GET", `/api/v1/jobs/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Takes the next offer and acknowledges it; resolves once the job is leased. */
async function lease(socket: TestAgentSocket) {
  const { job: offer } = await socket.next("offer");
  socket.send({ type: "ack", job_id: offer.id, fence: offer.fence });
  const leased = await socket.next("leased");
  expect(leased).toMatchObject({ job_id: offer.id, fence: offer.fence });
  return offer;
}

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("agent tokens", () => {
  it("are created by an Admin, shown once, listed with status, and revoked", async () => {
    const created = await newAgentToken("edge-1");
    expect(created.token).toMatch(/^lsa_/);
    const list = await api("GET", "/api/v1/agents");
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, offset: 0, limit: 100 });
    expect(list.body.items[0]).toMatchObject({ id: created.id, name: "edge-1", status: "disconnected" });
    expect(JSON.stringify(list.body)).not.toContain(created.token);

    const { socket } = await connect(created.token, { capacity: 3, agent_version: "9.9.9" });
    const seen = await api("GET", `/api/v1/agents/${created.id}`);
    expect(seen.body).toMatchObject({
      status: "connected",
      version: "9.9.9",
      capacity: 3,
      kinds: ["noop", "sleep"],
    });

    expect((await api("DELETE", `/api/v1/agents/${created.id}`)).status).toBe(204);
    expect((await socket.closed).code).toBe(CLOSE.REVOKED);
    expect((await api("GET", `/api/v1/agents/${created.id}`)).status).toBe(404);
    expect((await api("DELETE", `/api/v1/agents/${created.id}`)).status).toBe(404);
    await expect(connectAgent(plane.url, created.token)).rejects.toThrow(/401/);
  });

  it("are needed to connect, and only over a WebSocket upgrade", async () => {
    await expect(connectAgent(plane.url, "lsa_nope")).rejects.toThrow(/401/);
    await expect(connectAgent(plane.url, ADMIN_KEY)).rejects.toThrow(/401/);
    const { token } = await newAgentToken();
    const plain = await fetch(`${plane.url}/api/v1/agents/connect`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(plain.status).toBe(426);
    expect(plain.headers.get("content-type")).toContain("application/problem+json");
  });

  it("need an Admin with agents:write to be created", async () => {
    const key = await api("POST", "/api/v1/api-keys", { name: "reader", scopes: ["agents:read"] });
    expect(key.status).toBe(201);
    expect((await api("GET", "/api/v1/agents", undefined, key.body.key)).status).toBe(200);
    expect((await api("POST", "/api/v1/agents", { name: "x" }, key.body.key)).status).toBe(403);
    expect((await api("POST", "/api/v1/agents", { name: "" })).status).toBe(422);
  });
});

describe("the protocol", () => {
  it("closes the connection on a malformed frame or a missing hello", async () => {
    const { token } = await newAgentToken();
    const raw = await connectAgent(plane.url, token);
    sockets.push(raw);
    raw.sendRaw("this is not json");
    expect((await raw.closed).code).toBe(CLOSE.PROTOCOL);

    const early = await connectAgent(plane.url, token);
    sockets.push(early);
    early.send({ type: "heartbeat", leases: [] });
    const closed = await early.closed;
    expect(closed).toMatchObject({ code: CLOSE.PROTOCOL, reason: "the first message must be hello" });

    const wrong = await connectAgent(plane.url, token);
    sockets.push(wrong);
    wrong.send(hello({ capacity: -1 }));
    expect((await wrong.closed).code).toBe(CLOSE.PROTOCOL);
  });

  it("refuses another protocol version", async () => {
    const { token } = await newAgentToken();
    const socket = await connectAgent(plane.url, token);
    sockets.push(socket);
    socket.send(hello({ protocol: 99 }));
    const closed = await socket.closed;
    expect(closed.code).toBe(CLOSE.VERSION);
    expect(closed.reason).toContain("speaks 1");
  });

  it("closes the older connection when the same agent connects again", async () => {
    const { token } = await newAgentToken();
    const first = await connect(token);
    await connect(token);
    expect((await first.socket.closed).code).toBe(CLOSE.REPLACED);
  });
});

describe("leasing", () => {
  it("offers, leases and completes a job once", async () => {
    const { token, id: agentId } = await newAgentToken();
    const { socket, welcome } = await connect(token);
    expect(welcome).toMatchObject({ agent_id: agentId, lease_ms: TIMINGS.leaseMs, leases: [] });

    const id = await enqueue({ kind: "noop", payload: { ms: 5 } });
    const offer = await lease(socket);
    expect(offer).toMatchObject({ id, kind: "noop", attempt: 0, payload: { ms: 5 } });
    expect(await job(id)).toMatchObject({ status: "running", attempt: 1, agent_id: agentId });
    const agents = await api("GET", `/api/v1/agents/${agentId}`);
    expect(agents.body.jobs).toEqual([{ id, kind: "noop", status: "running" }]);

    socket.send({ type: "progress", job_id: id, fence: offer.fence, progress: { done: 0.5 } });
    await until(
      () => job(id),
      (j) => j.progress?.done === 0.5,
      "the progress to show",
    );
    socket.send({ type: "result", job_id: id, fence: offer.fence, outcome: "succeeded", result: { n: 1 } });
    const done = await until(
      () => job(id),
      (j) => j.status === "succeeded",
      "the job to succeed",
    );
    // Progress belongs to a running attempt: the finished job shows its result, not a phase.
    expect(done).toMatchObject({ attempt: 1, result: { n: 1 }, progress: null });

    // The same result again changes nothing; a result for a finished job with another fence is refused.
    socket.send({ type: "result", job_id: id, fence: offer.fence, outcome: "failed", error: "late" });
    socket.send({ type: "result", job_id: id, fence: offer.fence + 1, outcome: "succeeded" });
    const refused = await socket.next("refused");
    expect(refused).toMatchObject({ job_id: id, fence: offer.fence + 1 });
    expect(await job(id)).toMatchObject({ status: "succeeded", error: null });
  });

  it("returns an offer that is not acknowledged in time to the queue without counting an attempt", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "noop", payload: {} });
    const first = (await socket.next("offer")).job;

    clock.advance(TIMINGS.offerTimeoutMs + 1);
    expect(await plane.services.jobs.reap()).toMatchObject({ offers: 1 });
    plane.hub.poke();
    const second = (await socket.next("offer")).job;
    expect(second.id).toBe(id);
    expect(second.fence).toBeGreaterThan(first.fence);
    expect(second.attempt).toBe(0);

    // The late ack of the first offer names an old fence: refused, and the job is not leased by it.
    socket.send({ type: "ack", job_id: id, fence: first.fence });
    expect(await socket.next("refused")).toMatchObject({ job_id: id, fence: first.fence });
    expect((await job(id)).status).toBe("offered");
  });

  it("requeues a lapsed lease with backoff and fails the job after its last attempt", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "noop", payload: {}, max_attempts: 2 });
    const first = await lease(socket);

    // A heartbeat keeps it alive past the original expiry.
    clock.advance(TIMINGS.leaseMs - 1000);
    socket.send({ type: "heartbeat", leases: [{ job_id: id, fence: first.fence }] });
    await until(
      () => job(id),
      (j) => Date.parse(j.lease_expires_at) > clock.now().getTime() + 1000,
      "the heartbeat to extend the lease",
    );
    clock.advance(2000);
    expect(await plane.services.jobs.reap()).toMatchObject({ leases: 0 });

    clock.advance(TIMINGS.leaseMs);
    expect(await plane.services.jobs.reap()).toMatchObject({ leases: 1 });
    const requeued = await job(id);
    expect(requeued).toMatchObject({ status: "queued", attempt: 1, agent_id: null });
    expect(Date.parse(requeued.not_before)).toBeGreaterThan(clock.now().getTime());
    expect(requeued.error).toContain("lapsed");

    // The agent that lost it is refused when it finally reports.
    socket.send({ type: "result", job_id: id, fence: first.fence, outcome: "succeeded" });
    expect(await socket.next("refused")).toMatchObject({ job_id: id });

    // Not offered before the backoff ends; offered after it.
    plane.hub.poke();
    await plane.hub.settled();
    expect(socket.pending().filter((m) => m.type === "offer")).toEqual([]);
    clock.advance(TIMINGS.retryBaseMs + 1);
    plane.hub.poke();
    const second = await lease(socket);
    expect(second).toMatchObject({ id, attempt: 1 });

    clock.advance(TIMINGS.leaseMs + 1);
    await plane.services.jobs.reap();
    expect(await job(id)).toMatchObject({ status: "failed", attempt: 2 });
  });

  it("retries a retryable failure and fails at once on a non-retryable one, clearing each attempt's progress", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "noop", payload: {}, max_attempts: 3 });
    const first = await lease(socket);
    socket.send({ type: "progress", job_id: id, fence: first.fence, progress: { phase: "reading the log" } });
    await until(
      () => job(id),
      (j) => j.progress?.phase === "reading the log",
      "the progress to show",
    );
    socket.send({ type: "result", job_id: id, fence: first.fence, outcome: "failed", error: "flaky" });
    const requeued = await until(
      () => job(id),
      (j) => j.status === "queued",
      "the job to be queued again",
    );
    expect(requeued).toMatchObject({ progress: null, error: "flaky" });
    clock.advance(TIMINGS.retryBaseMs + 1);
    plane.hub.poke();
    const second = await lease(socket);
    socket.send({ type: "progress", job_id: id, fence: second.fence, progress: { phase: "profiling" } });
    socket.send({
      type: "result",
      job_id: id,
      fence: second.fence,
      outcome: "failed",
      error: "the table is gone",
      retryable: false,
    });
    const failed = await until(
      () => job(id),
      (j) => j.status === "failed",
      "the job to fail",
    );
    expect(failed).toMatchObject({ attempt: 2, error: "the table is gone", progress: null });
  });

  it("offers P1 before P2 and only kinds the agent announced; other kinds wait visibly", async () => {
    const low = await enqueue({ kind: "noop", payload: {}, priority: "P2" });
    const high = await enqueue({ kind: "noop", payload: {}, priority: "P1" });
    const sleeper = await enqueue({ kind: "sleep", payload: { ms: 1 } });
    const waiting = await job(sleeper);
    expect(waiting.waiting_for).toMatch(/agent/);

    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1, kinds: ["noop"] });
    const first = await lease(socket);
    expect(first.id).toBe(high);
    socket.send({ type: "result", job_id: high, fence: first.fence, outcome: "succeeded" });
    const second = await lease(socket);
    expect(second.id).toBe(low);
    socket.send({ type: "result", job_id: low, fence: second.fence, outcome: "succeeded" });
    await until(
      () => job(low),
      (j) => j.status === "succeeded",
      "the P2 job to succeed",
    );
    plane.hub.poke();
    await plane.hub.settled();
    expect(socket.pending().filter((m) => m.type === "offer")).toEqual([]);
    expect(await job(sleeper)).toMatchObject({ status: "queued" });
    expect((await job(sleeper)).waiting_for).toContain("sleep");
  });

  it("does not offer more jobs than the agent's capacity, and a reject hands the job to another agent", async () => {
    for (let i = 0; i < 3; i++) await enqueue({ kind: "noop", payload: { ms: i } });
    const a = await newAgentToken("a");
    const { socket: one } = await connect(a.token, { capacity: 2 });
    const o1 = (await one.next("offer")).job;
    const o2 = (await one.next("offer")).job;
    await plane.hub.settled();
    expect(one.pending().filter((m) => m.type === "offer")).toEqual([]);

    one.send({ type: "reject", job_id: o1.id, fence: o1.fence, reason: "full" });
    const b = await newAgentToken("b");
    const { socket: two } = await connect(b.token, { capacity: 2 });
    const taken = [(await two.next("offer")).job.id, (await two.next("offer")).job.id];
    expect(taken).toContain(o1.id);
    expect(taken).not.toContain(o2.id);
  });
});

describe("routing by what agents may use", () => {
  it("offers a job only to an agent whose allow list covers its location, and says why it waits", async () => {
    const a = await newAgentToken("lake-a");
    const { socket: one } = await connect(a.token, {
      capacity: 2,
      capabilities: ["s3"],
      allow: ["s3://lake/a"],
    });
    const forB = await enqueue({ kind: "noop", payload: { uri: "s3://lake/b/orders" } });
    const forA = await enqueue({ kind: "noop", payload: { uri: "s3://Lake/a/orders/" } });
    expect((await one.next("offer")).job.id).toBe(forA);
    await plane.hub.settled();
    expect(one.pending().filter((m) => m.type === "offer")).toEqual([]);
    const waiting = await job(forB);
    expect(waiting).toMatchObject({ status: "queued", locations: ["s3://lake/b/orders"], refusals: [] });
    expect(waiting.waiting_for).toContain("an agent allowed to use s3://lake/b/orders");
    expect(waiting.waiting_for).toContain("lake-a: s3://lake/a");

    const b = await newAgentToken("lake-b");
    const { socket: two } = await connect(b.token, {
      capacity: 2,
      capabilities: ["s3"],
      allow: ["s3://lake/b"],
    });
    expect((await two.next("offer")).job.id).toBe(forB);
  });

  it("finds a job the agent may take behind many it may not, in offer order", async () => {
    for (let i = 0; i < 12; i++)
      await enqueue({ kind: "noop", payload: { uri: `s3://lake/b/t${i}` }, priority: "P1" });
    const mine = await enqueue({ kind: "noop", payload: { uri: "s3://lake/a/late" } });
    const a = await newAgentToken("behind");
    const { socket } = await connect(a.token, { capacity: 1, capabilities: ["s3"], allow: ["s3://lake/a"] });
    expect((await socket.next("offer")).job.id).toBe(mine);
  });

  it("offers a job that names an endpoint only to an agent allowed to reach it", async () => {
    // The diagnostic kinds name no endpoint; a job row that does stands in for a catalog job.
    const id = await enqueue({ kind: "noop", payload: {} });
    await plane.services.db.run(
      sql`update jobs set endpoints = json_array('https://uc.example.com:443') where id = ${id}`,
    );
    const a = await newAgentToken("no-endpoints");
    const { socket: one } = await connect(a.token, { capacity: 1 });
    await plane.hub.settled();
    expect(one.pending().filter((m) => m.type === "offer")).toEqual([]);
    expect((await job(id)).waiting_for).toContain("an agent allowed to use https://uc.example.com:443");
    const b = await newAgentToken("catalog");
    const { socket: two } = await connect(b.token, {
      capacity: 1,
      endpoints: ["https://UC.example.com/api/2.1"],
    });
    expect((await two.next("offer")).job.id).toBe(id);
  });

  it("hands a job an agent refuses to another agent, counts the attempt, and never offers it to the refuser again", async () => {
    const a = await newAgentToken("refuser");
    const { socket: one } = await connect(a.token, { capacity: 1, allow: ["file:///lake"] });
    const id = await enqueue({ kind: "noop", payload: { uri: "file:///lake/t" } });
    const offer = (await one.next("offer")).job;
    one.send({
      type: "reject",
      job_id: id,
      fence: offer.fence,
      reason: "not in my allow list",
      refused: true,
    });
    const refused = await until(
      () => job(id),
      (j) => j.refusals.length === 1,
      "the refusal",
    );
    expect(refused).toMatchObject({ status: "queued", attempt: 1, agent_id: null });
    expect(refused.refusals[0]).toMatchObject({ agent_id: a.id, reason: "not in my allow list" });
    expect(refused.waiting_for).toContain("has not refused it");
    plane.hub.poke();
    await plane.hub.settled();
    expect(one.pending().filter((m) => m.type === "offer")).toEqual([]);

    const b = await newAgentToken("taker");
    const { socket: two } = await connect(b.token, { capacity: 1, allow: ["file:///lake"] });
    const taken = await lease(two);
    expect(taken).toMatchObject({ id, attempt: 1 });
    two.send({ type: "result", job_id: id, fence: taken.fence, outcome: "succeeded" });
    await until(
      () => job(id),
      (j) => j.status === "succeeded",
      "the job to succeed on the other agent",
    );
  });

  it("fails a job when every attempt was refused, naming the refusal", async () => {
    const id = await enqueue({ kind: "noop", payload: { uri: "file:///lake/t" }, max_attempts: 1 });
    const a = await newAgentToken("only");
    const { socket } = await connect(a.token, { capacity: 1, allow: ["file:///lake"] });
    const offer = (await socket.next("offer")).job;
    socket.send({ type: "reject", job_id: id, fence: offer.fence, reason: "no", refused: true });
    const failed = await until(
      () => job(id),
      (j) => j.status === "failed",
      "the job to fail",
    );
    expect(failed.error).toContain(`refused by agent ${a.id}: no`);
  });

  it("gives an agent that reconnects with a different allow list another chance at what it refused", async () => {
    const a = await newAgentToken("changing");
    const first = await connect(a.token, { capacity: 1, allow: ["file:///lake"] });
    const id = await enqueue({ kind: "noop", payload: { uri: "file:///lake/t" } });
    const offer = (await first.socket.next("offer")).job;
    first.socket.send({ type: "reject", job_id: id, fence: offer.fence, reason: "no", refused: true });
    await until(
      () => job(id),
      (j) => j.refusals.length === 1,
      "the refusal",
    );
    first.socket.close();
    await first.socket.closed;
    const second = await connect(a.token, { capacity: 1, allow: ["file:///lake", "file:///more"] });
    expect((await second.socket.next("offer")).job.id).toBe(id);
    expect((await job(id)).refusals).toEqual([]);
  });
});

describe("a partition expiration validate", () => {
  const expirer = { kinds: ["partition_expiration"], capabilities: ["s3"], capacity: 1 };

  async function deltaTable(name: string): Promise<string> {
    const res = await api("POST", "/api/v1/tables", { name, uri: `s3://lake/${name}`, format: "delta" });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it("answers 200 with the agent's answer when the connected agent answers within the wait", async () => {
    const { token } = await newAgentToken("expirer");
    const { socket } = await connect(token, { ...expirer, allow: ["s3://lake/"] });
    const tableId = await deltaTable("hub.validate");
    const asked = api("POST", `/api/v1/tables/${tableId}/partition-expiration/validate`, {
      partition_column: "event_date",
    });
    const offer = await lease(socket);
    expect(offer).toMatchObject({ kind: "partition_expiration", payload: { validate: true, dry_run: true } });
    socket.send({ type: "progress", job_id: offer.id, fence: offer.fence, progress: { phase: "planning" } });
    socket.send({
      type: "result",
      job_id: offer.id,
      fence: offer.fence,
      outcome: "succeeded",
      result: expirationResult([], {
        validate: true,
        dry_run: true,
        can_run: false,
        reason: "event_date is not a date column",
        committed_version: null,
        committed_at: null,
      }),
    });
    const answer = await asked;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: offer.id,
      status: "succeeded",
      validate: true,
      summary: { can_run: false, reason: "event_date is not a date column" },
    });
    expect((await job(offer.id)).progress).toBeNull();
  });

  it("answers 503 at once when the connected agents may not read the table, and queues nothing", async () => {
    const { token } = await newAgentToken("elsewhere");
    await connect(token, { ...expirer, allow: ["s3://other/"] });
    const tableId = await deltaTable("hub.unreachable");
    const res = await api("POST", `/api/v1/tables/${tableId}/partition-expiration/validate`, {
      partition_column: "event_date",
    });
    expect(res.status).toBe(503);
    expect(res.body.detail).toContain("elsewhere: s3://other");
    expect((await api("GET", `/api/v1/tables/${tableId}/partition-expiration`)).body.total).toBe(0);
  });
});

describe("cancel", () => {
  it("ends a queued job at once and refuses to cancel a finished one", async () => {
    const id = await enqueue({ kind: "sleep", payload: { ms: 10 } });
    const res = await api("POST", `/api/v1/jobs/${id}/cancel`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id, status: "cancelled" });
    const again = await api("POST", `/api/v1/jobs/${id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body.detail).toContain("cancelled");
    expect((await api("POST", "/api/v1/jobs/job_nope/cancel")).status).toBe(404);

    // A cancelled job is never offered.
    const { token } = await newAgentToken();
    const { socket } = await connect(token);
    await plane.hub.settled();
    expect(socket.pending().filter((m) => m.type === "offer")).toEqual([]);
  });

  it("tells the agent holding a running job to stop, and the job ends cancelled", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "sleep", payload: { ms: 60_000 } });
    const offer = await lease(socket);

    const res = await api("POST", `/api/v1/jobs/${id}/cancel`);
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("cancelling");
    expect(await socket.next("cancel")).toMatchObject({ job_id: id, fence: offer.fence });

    socket.send({ type: "result", job_id: id, fence: offer.fence, outcome: "cancelled" });
    await until(
      () => job(id),
      (j) => j.status === "cancelled",
      "the job to be cancelled",
    );
  });

  it("is told again on reconnect, and a cancelling job whose lease lapses ends cancelled", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "sleep", payload: { ms: 60_000 } });
    const offer = await lease(socket);
    socket.terminate();
    expect((await api("POST", `/api/v1/jobs/${id}/cancel`)).body.status).toBe("cancelling");

    const again = await connect(token, { leases: [{ job_id: id, fence: offer.fence }] });
    expect(again.welcome.leases).toEqual([{ job_id: id, fence: offer.fence, state: "cancelling" }]);
    again.socket.terminate();

    clock.advance(TIMINGS.leaseMs + 1);
    expect(await plane.services.jobs.reap()).toMatchObject({ cancelled: 1 });
    expect(await job(id)).toMatchObject({ status: "cancelled" });
  });
});

describe("reconnects", () => {
  it("keep leases the agent names and requeue the ones it forgot", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 2 });
    const kept = await enqueue({ kind: "noop", payload: {} });
    const forgotten = await enqueue({ kind: "noop", payload: {} });
    const a = await lease(socket);
    const b = await lease(socket);
    const keptOffer = a.id === kept ? a : b;
    socket.terminate();
    await until(
      () => api("GET", "/api/v1/agents").then((r) => r.body.items[0].status),
      (s) => s === "disconnected",
      "the agent to be disconnected",
    );

    const again = await connect(token, {
      capacity: 0,
      leases: [
        { job_id: kept, fence: keptOffer.fence },
        { job_id: "job_unknown", fence: 1 },
      ],
    });
    expect(again.welcome.leases).toEqual([
      { job_id: kept, fence: keptOffer.fence, state: "valid" },
      { job_id: "job_unknown", fence: 1, state: "lost" },
    ]);
    expect(await job(forgotten)).toMatchObject({ status: "queued", agent_id: null });
    again.socket.send({ type: "result", job_id: kept, fence: keptOffer.fence, outcome: "succeeded" });
    await until(
      () => job(kept),
      (j) => j.status === "succeeded",
      "the kept job to succeed",
    );
  });

  it("survive a restart of the control plane", async () => {
    const { token } = await newAgentToken();
    const { socket } = await connect(token, { capacity: 1 });
    const id = await enqueue({ kind: "noop", payload: {} });
    const offer = await lease(socket);

    await plane.stop();
    expect((await socket.closed).code).toBe(CLOSE.GOING_AWAY);
    plane = await start();

    const again = await connect(token, { leases: [{ job_id: id, fence: offer.fence }] });
    expect(again.welcome.leases[0]?.state).toBe("valid");
    again.socket.send({ type: "result", job_id: id, fence: offer.fence, outcome: "succeeded" });
    const done = await until(
      () => job(id),
      (j) => j.status === "succeeded",
      "the job to succeed after the restart",
    );
    expect(done.attempt).toBe(1);
  });
});

describe("a hub woken from hibernation", () => {
  /** A socket as the Durable Object hands it to the hub: frames sent are kept to be read back. */
  function memorySocket() {
    const sent: { type: string; [k: string]: unknown }[] = [];
    const socket: AgentSocket = { send: (text) => sent.push(JSON.parse(text)), close: () => {} };
    return { socket, sent };
  }

  it("rebuilds a session from its stored state and goes on without a new hello", async () => {
    const { id: agentId } = await newAgentToken();
    const { jobs, agents } = plane.services;
    const before = new LocalHub(jobs, agents, clock);
    const first = memorySocket();
    before.open({ agentId, connectedAt: clock.now().getTime() }, first.socket);
    await before.message(agentId, first.socket, JSON.stringify(hello({ capacity: 1 })));
    expect(first.sent.map((m) => m.type)).toEqual(["welcome"]);
    const stored = structuredClone(before.sessionState(agentId));
    expect(stored?.hello).toMatchObject({ capacity: 1, kinds: ["noop", "sleep"] });

    // A new hub instance (the object was evicted) sees the same socket again with its attachment.
    const after = new LocalHub(jobs, agents, clock);
    const woken = memorySocket();
    after.restore(stored as NonNullable<typeof stored>, woken.socket);
    const id = await enqueue({ kind: "noop", payload: {} });
    after.poke();
    await after.settled();
    const offer = woken.sent.find((m) => m.type === "offer") as unknown as {
      job: { id: string; fence: number };
    };
    expect(offer.job.id).toBe(id);
    await after.message(
      agentId,
      woken.socket,
      JSON.stringify({ type: "ack", job_id: id, fence: offer.job.fence }),
    );
    expect(woken.sent.map((m) => m.type)).toEqual(["offer", "leased"]);
    expect((await job(id)).status).toBe("running");
  });
});
