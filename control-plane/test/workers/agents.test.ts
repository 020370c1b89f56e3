// Agents through the Worker build: the connect route authenticates, the AgentHub Durable Object
// accepts the socket with the hibernation API, and jobs are offered, leased and completed over it.
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const ADMIN_KEY = "lsk_workerdtestkey0000000000000000000000000000";
const worker = () => (exports as unknown as { default: Fetcher }).default;

async function call(path: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  if (init.body) headers.set("content-type", "application/json");
  return worker().fetch(new Request(`https://lakesmith.test${path}`, { ...init, headers }));
}

type Frame = { type: string; [key: string]: unknown };

async function connect(token: string) {
  const res = await call("/api/v1/agents/connect", { token, headers: { upgrade: "websocket" } });
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const inbox: Frame[] = [];
  const waiters: { type: string; resolve: (f: Frame) => void }[] = [];
  ws.addEventListener("message", (event) => {
    const frame = JSON.parse(String(event.data)) as Frame;
    const i = waiters.findIndex((w) => w.type === frame.type);
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(frame);
    else inbox.push(frame);
  });
  const closed = new Promise<number>((resolve) => ws.addEventListener("close", (e) => resolve(e.code)));
  return {
    ws,
    closed,
    send: (frame: Frame) => ws.send(JSON.stringify(frame)),
    next(type: string): Promise<Frame> {
      const i = inbox.findIndex((f) => f.type === type);
      if (i >= 0) return Promise.resolve(inbox.splice(i, 1)[0] as Frame);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} frame`)), 5000);
        waiters.push({
          type,
          resolve: (f) => {
            clearTimeout(timer);
            resolve(f);
          },
        });
      });
    },
  };
}

async function newAgent(name: string) {
  const res = await call("/api/v1/agents", {
    method: "POST",
    token: ADMIN_KEY,
    body: JSON.stringify({ name }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; token: string };
}

describe("agents in workerd", () => {
  it("refuses a bad token and a request that is not an upgrade", async () => {
    expect(
      (await call("/api/v1/agents/connect", { token: "lsa_nope", headers: { upgrade: "websocket" } })).status,
    ).toBe(401);
    const { token } = await newAgent("plain");
    expect((await call("/api/v1/agents/connect", { token })).status).toBe(426);
  });

  it("offers a job to a connected agent through the Durable Object and records its result", async () => {
    const agent = await newAgent("edge");
    const socket = await connect(agent.token);
    socket.send({
      type: "hello",
      protocol: 1,
      agent_version: "workerd-test",
      kinds: ["noop"],
      capabilities: [],
      capacity: 1,
      leases: [],
    });
    const welcome = await socket.next("welcome");
    expect(welcome.agent_id).toBe(agent.id);

    const created = await call("/api/v1/jobs", {
      method: "POST",
      token: ADMIN_KEY,
      body: JSON.stringify({ kind: "noop", payload: {} }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    const offer = (await socket.next("offer")) as unknown as { job: { id: string; fence: number } };
    expect(offer.job.id).toBe(id);
    socket.send({ type: "ack", job_id: id, fence: offer.job.fence });
    await socket.next("leased");
    socket.send({
      type: "result",
      job_id: id,
      fence: offer.job.fence,
      outcome: "succeeded",
      result: { ok: true },
    });

    let job: { status: string; result: unknown } = { status: "", result: null };
    for (let i = 0; i < 100 && job.status !== "succeeded"; i++) {
      job = (await (await call(`/api/v1/jobs/${id}`, { token: ADMIN_KEY })).json()) as typeof job;
      if (job.status !== "succeeded") await new Promise((r) => setTimeout(r, 20));
    }
    expect(job).toMatchObject({ status: "succeeded", result: { ok: true } });

    const listed = (await (await call(`/api/v1/agents/${agent.id}`, { token: ADMIN_KEY })).json()) as {
      status: string;
      version: string;
    };
    expect(listed).toMatchObject({ status: "connected", version: "workerd-test" });

    expect((await call(`/api/v1/agents/${agent.id}`, { method: "DELETE", token: ADMIN_KEY })).status).toBe(
      204,
    );
    expect(await socket.closed).toBe(4003);
  });
});
