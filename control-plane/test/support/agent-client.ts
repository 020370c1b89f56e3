/**
 * A bare protocol client for hub tests: a real WebSocket to the real server, with the agent's side
 * of the protocol driven by hand, so each test can send exactly the frames it wants (stale fences,
 * malformed frames) that the real agent would never send.
 */
import { type PlaneMessage, PlaneMessageSchema } from "@lakesmith/shared/protocol";
import WebSocket from "ws";

export interface TestAgentSocket {
  send(message: unknown): void;
  sendRaw(text: string): void;
  /** The next message of this type (earlier messages of other types are kept for later calls). */
  next<T extends PlaneMessage["type"]>(
    type: T,
    timeoutMs?: number,
  ): Promise<Extract<PlaneMessage, { type: T }>>;
  /** Messages received and not yet taken by `next`. */
  pending(): PlaneMessage[];
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
  terminate(): void;
}

export async function connectAgent(baseUrl: string, token: string): Promise<TestAgentSocket> {
  const ws = new WebSocket(`${baseUrl.replace(/^http/, "ws")}/api/v1/agents/connect`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const inbox: PlaneMessage[] = [];
  const waiters: { type: string; resolve: (m: PlaneMessage) => void }[] = [];
  ws.on("message", (data) => {
    const message = PlaneMessageSchema.parse(JSON.parse(String(data)));
    const waiter = waiters.findIndex((w) => w.type === message.type);
    if (waiter >= 0) waiters.splice(waiter, 1)[0]?.resolve(message);
    else inbox.push(message);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
    ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
  });
  return {
    send: (message) => ws.send(JSON.stringify(message)),
    sendRaw: (text) => ws.send(text),
    next(type, timeoutMs = 5000) {
      const index = inbox.findIndex((m) => m.type === type);
      if (index >= 0) return Promise.resolve(inbox.splice(index, 1)[0] as never);
      return new Promise((resolve, reject) => {
        const waiter = {
          type,
          resolve: (m: unknown) => {
            clearTimeout(timer);
            resolve(m as never);
          },
        };
        // A waiter that timed out leaves, so a later message of its type stays in the inbox.
        const timer = setTimeout(() => {
          const at = waiters.indexOf(waiter);
          if (at >= 0) waiters.splice(at, 1);
          reject(new Error(`no ${type} message within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    pending: () => [...inbox],
    closed,
    close: () => ws.close(),
    terminate: () => ws.terminate(),
  };
}

export function hello(overrides: Record<string, unknown> = {}) {
  return {
    type: "hello",
    protocol: 1,
    agent_version: "test",
    kinds: ["noop", "sleep"],
    capabilities: ["file"],
    capacity: 2,
    leases: [],
    ...overrides,
  };
}
