/**
 * The agent's side of the protocol against a scripted control plane: a plain WebSocket server that
 * sends exactly the frames each test needs, including ones the real control plane never sends (a
 * malformed frame) and a drop at a chosen moment. The real plane is exercised in
 * test/agents-e2e.test.ts.
 */
import { mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentMessage, AgentMessageSchema, CLOSE, type PlaneMessage } from "@lakesmith/shared/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { z } from "zod";
import { Agent } from "../src/agent.ts";
import { parseConfig } from "../src/config.ts";
import { diagnosticHandlers } from "../src/handlers/diagnostic.ts";
import { defineHandler, HandlerRegistry, type JobHandler } from "../src/registry.ts";

interface PlaneSocket {
  ws: WebSocket;
  authorization: string | undefined;
  received: AgentMessage[];
  next<T extends AgentMessage["type"]>(type: T): Promise<Extract<AgentMessage, { type: T }>>;
  send(message: PlaneMessage | string): void;
  closed: Promise<{ code: number; reason: string }>;
}

let server: WebSocketServer;
const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await new Promise((r) => server.close(r));
});

/** A scripted plane; each accepted socket is handed to the test in order. */
async function scriptedPlane() {
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  const queue: PlaneSocket[] = [];
  const waiting: ((s: PlaneSocket) => void)[] = [];
  server.on("connection", (ws, req) => {
    const received: AgentMessage[] = [];
    const waiters: { type: string; resolve: (m: AgentMessage) => void }[] = [];
    ws.on("message", (data) => {
      const message = AgentMessageSchema.parse(JSON.parse(String(data)));
      const i = waiters.findIndex((w) => w.type === message.type);
      if (i >= 0) waiters.splice(i, 1)[0]?.resolve(message);
      else received.push(message);
    });
    const socket: PlaneSocket = {
      ws,
      authorization: req.headers.authorization,
      received,
      next(type) {
        const i = received.findIndex((m) => m.type === type);
        if (i >= 0) return Promise.resolve(received.splice(i, 1)[0] as never);
        return new Promise((resolve) => waiters.push({ type, resolve: resolve as never }));
      },
      send: (m) => ws.send(typeof m === "string" ? m : JSON.stringify(m)),
      closed: new Promise((resolve) =>
        ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
      ),
    };
    const waiter = waiting.shift();
    if (waiter) waiter(socket);
    else queue.push(socket);
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    accept: (): Promise<PlaneSocket> => {
      const s = queue.shift();
      return s ? Promise.resolve(s) : new Promise((resolve) => waiting.push(resolve));
    },
  };
}

function welcome(leases: { job_id: string; fence: number; state: "valid" | "lost" | "cancelling" }[] = []) {
  return {
    type: "welcome",
    protocol: 1,
    agent_id: "agt_test",
    lease_ms: 5000,
    heartbeat_ms: 100,
    offer_timeout_ms: 1000,
    leases,
  } as const;
}

function offer(id: string, kind: string, payload: Record<string, unknown>, fence = 1) {
  return {
    type: "offer",
    job: { id, kind, fence, attempt: 0, priority: "P2", table_id: null, payload },
  } as const;
}

/** A job that sends two parts of its output and answers the plane's replies. */
const twoParts = defineHandler({
  kind: "two_parts",
  payload: z.object({}),
  locations: () => [],
  run: async (ctx) => ({
    replies: [await ctx.part({ n: 1 }), await ctx.part({ n: 2 })],
  }),
});

async function startAgent(
  url: string,
  overrides: Record<string, unknown> = {},
  handlers: JobHandler[] = diagnosticHandlers,
) {
  const agent = new Agent({
    config: parseConfig({
      control_plane: url,
      token: "lsa_test",
      concurrency: 2,
      allow: ["file:///lake"],
      scratch: mkdtempSync(join(tmpdir(), "agent-unit-")),
      reconnect_base_ms: 20,
      reconnect_max_ms: 50,
      ...overrides,
    }),
    registry: new HandlerRegistry(handlers),
    log: pino({ level: "silent" }),
  });
  agents.push(agent);
  await agent.start();
  return agent;
}

describe("agent protocol", () => {
  it("says hello with its token, kinds, capabilities and capacity", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url, { capabilities: ["gpu"] });
    const socket = await plane.accept();
    expect(socket.authorization).toBe("Bearer lsa_test");
    expect(await socket.next("hello")).toMatchObject({
      protocol: 1,
      kinds: ["noop", "sleep"],
      capabilities: ["file", "gpu"],
      capacity: 2,
      leases: [],
      draining: false,
    });
  });

  it("closes with a protocol error on a malformed frame, then reconnects", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url);
    const first = await plane.accept();
    await first.next("hello");
    first.send(JSON.stringify({ type: "offer", job: { id: "x" } }));
    const closed = await first.closed;
    expect(closed.code).toBe(CLOSE.PROTOCOL);
    expect(closed.reason).toMatch(/^invalid job\./);
    const second = await plane.accept();
    expect((await second.next("hello")).type).toBe("hello");
  });

  it("announces its allow list and endpoints, canonical, in hello", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url, {
      allow: ["file:///lake/./raw/", "s3://Lake/warehouse"],
      allow_endpoints: ["https://UC.example.com/api/2.1"],
    });
    const socket = await plane.accept();
    expect(await socket.next("hello")).toMatchObject({
      allow: ["file:///lake/raw", "s3://lake/warehouse"],
      endpoints: ["https://uc.example.com:443"],
    });
  });

  it("refuses an offer outside its allow list before it acks, so the plane hands the job to another agent", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url);
    const socket = await plane.accept();
    await socket.next("hello");
    socket.send(welcome());
    socket.send(offer("job_out", "noop", { uri: "file:///elsewhere/t" }));
    expect(await socket.next("reject")).toMatchObject({
      job_id: "job_out",
      refused: true,
      reason: expect.stringContaining("location 'file:///elsewhere/t' is outside this agent's allow list"),
    });
    socket.send(offer("job_in", "noop", { uri: "file:///lake/t" }));
    expect(await socket.next("ack")).toEqual({ type: "ack", job_id: "job_in", fence: 1 });
  });

  it("acks an offer, runs it once leased, and rejects beyond its capacity", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url, { concurrency: 1 });
    const socket = await plane.accept();
    await socket.next("hello");
    socket.send(welcome());
    socket.send(offer("job_a", "noop", {}));
    socket.send(offer("job_b", "noop", {}));
    expect(await socket.next("ack")).toEqual({ type: "ack", job_id: "job_a", fence: 1 });
    expect(await socket.next("reject")).toMatchObject({
      job_id: "job_b",
      reason: "the agent is at capacity",
    });
    socket.send({ type: "leased", job_id: "job_a", fence: 1, lease_expires_at: new Date().toISOString() });
    expect(await socket.next("result")).toEqual({
      type: "result",
      job_id: "job_a",
      fence: 1,
      outcome: "succeeded",
      result: { ok: true },
    });
  });

  it("keeps a running job across a dropped socket, names it in hello, and reports it once valid", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url);
    const first = await plane.accept();
    await first.next("hello");
    first.send(welcome());
    first.send(offer("job_s", "sleep", { ms: 400, step_ms: 50 }, 7));
    await first.next("ack");
    first.send({ type: "leased", job_id: "job_s", fence: 7, lease_expires_at: new Date().toISOString() });
    expect((await first.next("heartbeat")).leases).toEqual([{ job_id: "job_s", fence: 7 }]);
    first.ws.terminate();

    const second = await plane.accept();
    expect((await second.next("hello")).leases).toEqual([{ job_id: "job_s", fence: 7 }]);
    second.send(welcome([{ job_id: "job_s", fence: 7, state: "valid" }]));
    expect(await second.next("result")).toMatchObject({ job_id: "job_s", fence: 7, outcome: "succeeded" });
  });

  it("sends parts one at a time, and re-sends the unanswered one after a reconnect", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url, {}, [...diagnosticHandlers, twoParts]);
    const first = await plane.accept();
    await first.next("hello");
    first.send({ ...welcome(), heartbeat_ms: 60_000 });
    first.send(offer("job_p", "two_parts", {}, 4));
    await first.next("ack");
    first.send({ type: "leased", job_id: "job_p", fence: 4, lease_expires_at: new Date().toISOString() });
    expect(await first.next("part")).toEqual({
      type: "part",
      job_id: "job_p",
      fence: 4,
      seq: 1,
      part: { n: 1 },
    });
    // No ack: the socket drops, and nothing more is sent on it.
    first.ws.terminate();

    const second = await plane.accept();
    await second.next("hello");
    second.send(welcome([{ job_id: "job_p", fence: 4, state: "valid" }]));
    expect(await second.next("part")).toMatchObject({ seq: 1, part: { n: 1 } });
    // An ack for another number changes nothing; the right one lets the next part go.
    second.send({ type: "part_ack", job_id: "job_p", fence: 4, seq: 2 });
    second.send({ type: "part_ack", job_id: "job_p", fence: 4, seq: 1, reply: { read: ["a"] } });
    expect(await second.next("part")).toMatchObject({ seq: 2, part: { n: 2 } });
    second.send({ type: "part_ack", job_id: "job_p", fence: 4, seq: 2 });
    expect(await second.next("result")).toMatchObject({
      job_id: "job_p",
      outcome: "succeeded",
      result: { replies: [{ read: ["a"] }, null] },
    });
    expect(second.received.filter((m) => m.type === "part")).toEqual([]);
  });

  it("stops a job whose part the plane refuses, without a result", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url, {}, [...diagnosticHandlers, twoParts]);
    const socket = await plane.accept();
    await socket.next("hello");
    socket.send({ ...welcome(), heartbeat_ms: 60_000 });
    socket.send(offer("job_q", "two_parts", {}, 2));
    await socket.next("ack");
    socket.send({ type: "leased", job_id: "job_q", fence: 2, lease_expires_at: new Date().toISOString() });
    await socket.next("part");
    socket.send({ type: "refused", job_id: "job_q", fence: 2, reason: "part 1: not a catalog sync part" });
    await new Promise((r) => setTimeout(r, 100));
    expect(socket.received.filter((m) => m.type === "result" || m.type === "part")).toEqual([]);
  });

  it("re-sends a result whose socket dropped before the plane could record it", async () => {
    const plane = await scriptedPlane();
    await startAgent(plane.url);
    const first = await plane.accept();
    await first.next("hello");
    first.send({ ...welcome(), heartbeat_ms: 60_000 });
    first.send(offer("job_r", "noop", {}, 3));
    await first.next("ack");
    first.send({ type: "leased", job_id: "job_r", fence: 3, lease_expires_at: new Date().toISOString() });
    await first.next("result");
    first.ws.terminate();

    const second = await plane.accept();
    expect((await second.next("hello")).leases).toEqual([{ job_id: "job_r", fence: 3 }]);
    second.send(welcome([{ job_id: "job_r", fence: 3, state: "valid" }]));
    expect(await second.next("result")).toMatchObject({ job_id: "job_r", fence: 3, outcome: "succeeded" });
  });

  it("drops a job the plane says was lost, and stops a refused one without a result", async () => {
    const plane = await scriptedPlane();
    const agent = await startAgent(plane.url);
    const first = await plane.accept();
    await first.next("hello");
    first.send(welcome());
    for (const id of ["job_lost", "job_refused"]) {
      first.send(offer(id, "sleep", { ms: 60_000 }, 2));
      await first.next("ack");
      first.send({ type: "leased", job_id: id, fence: 2, lease_expires_at: new Date().toISOString() });
    }
    await new Promise((r) => setTimeout(r, 50));
    first.send({
      type: "refused",
      job_id: "job_refused",
      fence: 2,
      reason: "stale fence 2; the job is at fence 3",
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(agent.activeJobs()).toBe(1);
    first.ws.terminate();

    const second = await plane.accept();
    expect((await second.next("hello")).leases).toEqual([{ job_id: "job_lost", fence: 2 }]);
    second.send(welcome([{ job_id: "job_lost", fence: 2, state: "lost" }]));
    await new Promise((r) => setTimeout(r, 150));
    expect(agent.activeJobs()).toBe(0);
    expect(second.received.filter((m) => m.type === "result")).toEqual([]);
  });

  it("exits with code 3 and does not reconnect when the token is revoked", async () => {
    const plane = await scriptedPlane();
    const agent = await startAgent(plane.url);
    const socket = await plane.accept();
    await socket.next("hello");
    socket.ws.close(CLOSE.REVOKED, "the agent's token was revoked");
    expect(await agent.exited).toMatchObject({ code: 3, reason: expect.stringContaining("revoked") });
    await new Promise((r) => setTimeout(r, 150));
    expect(server.clients.size).toBe(0);
  });
});
