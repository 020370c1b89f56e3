// The Worker build as the workerd suites call it: requests to its `fetch` with the bootstrap admin
// key, and agents on real WebSockets through the AgentHub Durable Object that complete every job
// they are offered with an answer of the test's choosing.
import { exports } from "cloudflare:workers";
import { expect } from "vitest";

export const ADMIN_KEY = "lsk_workerdtestkey0000000000000000000000000000";
export const worker = () =>
  (
    exports as unknown as {
      default: Fetcher & { scheduled(options: { scheduledTime: Date; cron: string }): Promise<unknown> };
    }
  ).default;
// biome-ignore lint/suspicious/noExplicitAny: JSON of the API
export type Json = Record<string, any>;

export async function call(
  path: string,
  init: { method?: string; body?: unknown; token?: string; upgrade?: boolean } = {},
) {
  const headers = new Headers({ authorization: `Bearer ${init.token ?? ADMIN_KEY}` });
  if (init.body !== undefined) headers.set("content-type", "application/json");
  if (init.upgrade) headers.set("upgrade", "websocket");
  return worker().fetch(
    new Request(`https://lakesmith.test${path}`, {
      method: init.method ?? "GET",
      headers,
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    }),
  );
}

/** The JSON answer of a request, which must have `status`. */
export async function json(path: string, init: Parameters<typeof call>[1] = {}, status = 200): Promise<Json> {
  const res = await call(path, init);
  const body = (await res.json()) as Json;
  expect(res.status, `${init.method ?? "GET"} ${path}: ${JSON.stringify(body)}`).toBe(status);
  return body;
}

/** Reads until `done` holds (4 s at most), and fails the test with the last value if it never does. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 200 && !done(value); i++) {
    await new Promise((r) => setTimeout(r, 20));
    value = await read();
  }
  expect(done(value), JSON.stringify(value)).toBe(true);
  return value;
}

/** Waits until the job succeeded or failed. */
export const ended = (id: string) =>
  until(
    () => json(`/api/v1/jobs/${id}`),
    (job) => job.status === "succeeded" || job.status === "failed",
  );

/** An answer sent in parts first (protocol `part`, each awaiting its `part_ack`), then as a result. */
export interface PartedAnswer {
  parts: Json[];
  result: Json;
}

/** An answer that fails the job for good with this error. */
export interface FailedAnswer {
  failed: string;
}

/**
 * An agent on a WebSocket that acknowledges every offer and completes the job with
 * `answer(kind, payload)` (its parts first, for a `PartedAnswer`; a `FailedAnswer` fails it). `hello` sets its kinds,
 * capabilities and allow list. Returns its id and socket.
 */
export async function answeringAgent(
  name: string,
  hello: {
    kinds: string[];
    capabilities: string[];
    allow: string[];
    endpoints?: string[];
    capacity?: number;
  },
  answer: (kind: string, payload: Json) => Json | PartedAnswer | FailedAnswer,
): Promise<{ id: string; ws: WebSocket }> {
  const created = await json("/api/v1/agents", { method: "POST", body: { name } }, 201);
  const res = await call("/api/v1/agents/connect", { token: created.token, upgrade: true });
  expect(res.status).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const offered = new Map<string, Json>();
  const acks = new Map<string, () => void>();
  const complete = async (job: Json) => {
    const ref = { job_id: job.id, fence: job.fence };
    const answered = answer(job.kind, job.payload);
    const failed = (answered as Partial<FailedAnswer>).failed;
    if (typeof failed === "string" && Object.keys(answered).length === 1) {
      ws.send(
        JSON.stringify({
          type: "result",
          ...ref,
          outcome: "failed",
          error: failed,
          retryable: false,
        }),
      );
      return;
    }
    const parted = "parts" in answered && "result" in answered ? (answered as PartedAnswer) : undefined;
    for (const [i, part] of (parted?.parts ?? []).entries()) {
      const acked = new Promise<void>((resolve) => acks.set(`${job.id}:${i + 1}`, resolve));
      ws.send(JSON.stringify({ type: "part", ...ref, seq: i + 1, part }));
      await acked;
    }
    const result = parted ? parted.result : answered;
    ws.send(JSON.stringify({ type: "result", ...ref, outcome: "succeeded", result }));
  };
  ws.addEventListener("message", (event) => {
    const frame = JSON.parse(String(event.data)) as Json;
    if (frame.type === "offer") {
      offered.set(frame.job.id, frame.job);
      ws.send(JSON.stringify({ type: "ack", job_id: frame.job.id, fence: frame.job.fence }));
    }
    if (frame.type === "part_ack") acks.get(`${frame.job_id}:${frame.seq}`)?.();
    const job = frame.type === "leased" ? offered.get(frame.job_id) : undefined;
    if (job) void complete(job);
  });
  ws.send(
    JSON.stringify({
      type: "hello",
      protocol: 1,
      agent_version: "workerd-test",
      capacity: 1,
      leases: [],
      ...hello,
    }),
  );
  return { id: created.id, ws };
}

/**
 * A workspace (Unity) connection to `workspaceUrl` created and synced once by an agent already
 * connected (its `catalog_sync` answer says what the catalog holds); returns the connection and
 * the id of its catalog `catalog`.
 */
export async function syncedWorkspace(
  name: string,
  workspaceUrl: string,
  catalog = "main",
): Promise<{ connection: Json; catalogId: string }> {
  const connection = await json(
    "/api/v1/catalog-connections",
    { method: "POST", body: { name, type: "workspace", workspace_url: workspaceUrl, token: "t" } },
    201,
  );
  await json(`/api/v1/catalog-connections/${connection.id}/sync`, { method: "POST" }, 202);
  await until(
    () => json(`/api/v1/catalog-connections/${connection.id}`),
    (c) => c.sync_status === "completed",
  );
  const catalogs = await json("/api/v1/catalogs?page_size=100");
  const found = catalogs.items.find((c: Json) => c.connection_id === connection.id && c.name === catalog);
  expect(found, JSON.stringify(catalogs.items)).toBeDefined();
  return { connection, catalogId: found.catalog_id };
}
