/**
 * Agents on Cloudflare Workers. One `AgentHub` Durable Object holds every agent's WebSocket with
 * the hibernation API: while agents are quiet the object is evicted and costs nothing; a frame, a
 * poke or an alarm wakes it, and it rebuilds the hub's sessions from what each socket carries
 * (`serializeAttachment`). The Worker talks to it through `ForwardingHub` (pokes, cancels, drops)
 * and hands it authenticated upgrade requests (`workerAgentGateway`).
 *
 * The Durable Object decides nothing either: it runs the same `LocalHub` as Node, against the same
 * database, so every move of a job is still one conditional update there.
 */
import { DurableObject } from "cloudflare:workers";
import { type AgentSocket, type Hub, LocalHub, type SessionState } from "../agents/hub.ts";
import { type AgentGateway, createServices } from "../services.ts";
import { openWorkerDatabase, type WorkerEnv, workerKeyring } from "./worker-db.ts";

/** There is one hub for the whole installation. */
const HUB_NAME = "agents";
const HUB_ORIGIN = "https://agent-hub.internal";

function hubStub(env: WorkerEnv): DurableObjectStub | undefined {
  const ns = env.AGENT_HUB;
  return ns ? ns.get(ns.idFromName(HUB_NAME)) : undefined;
}

/** The hub as the Worker sees it: every call is a request to the Durable Object. */
export class ForwardingHub implements Hub {
  private readonly inFlight = new Set<Promise<void>>();
  private pokePending = false;

  constructor(private readonly env: WorkerEnv) {}

  poke(): void {
    // Many enqueues in one request need one round, not many.
    if (this.pokePending) return;
    this.pokePending = true;
    this.forward("/poke", {}, () => {
      this.pokePending = false;
    });
  }

  cancel(agentId: string, jobId: string, fence: number, reason: string): void {
    this.forward("/cancel", { agentId, jobId, fence, reason });
  }

  drop(agentId: string, reason: string): void {
    this.forward("/drop", { agentId, reason });
  }

  /** Resolves when every forwarded call has been delivered; the Worker passes it to `waitUntil`. */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private forward(path: string, body: unknown, sent?: () => void): void {
    const stub = hubStub(this.env);
    if (!stub) return; // No AGENT_HUB binding: agents can't connect, so there is nobody to tell.
    const call = stub
      .fetch(`${HUB_ORIGIN}${path}`, { method: "POST", body: JSON.stringify(body) })
      .then(async (res) => {
        await res.body?.cancel();
        if (!res.ok) console.error(`[lakesmith] agent hub ${path} answered ${res.status}`);
      })
      .catch((err) => console.error(`[lakesmith] agent hub ${path} failed:`, err))
      .finally(() => {
        sent?.();
        this.inFlight.delete(call);
      });
    this.inFlight.add(call);
  }
}

/** Hands an agent's authenticated upgrade request to the Durable Object. */
export function workerAgentGateway(env: WorkerEnv): AgentGateway | undefined {
  if (!env.AGENT_HUB) return undefined;
  return {
    accept(c, agentId) {
      const stub = hubStub(env) as DurableObjectStub;
      const url = `${HUB_ORIGIN}/connect?agent=${encodeURIComponent(agentId)}`;
      return stub.fetch(new Request(url, c.req.raw));
    },
  };
}

export class AgentHub extends DurableObject<WorkerEnv> {
  private readonly hub: LocalHub;
  /** One wrapper per socket: the hub tells connections apart by identity. */
  private readonly wrappers = new WeakMap<WebSocket, AgentSocket>();
  private lastConnectedAt = 0;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    let hub: LocalHub | undefined;
    createServices({
      db: openWorkerDatabase(env),
      secrets: workerKeyring(env),
      ...(env.LAKESMITH_JWT_SECRET ? { jwtSecret: env.LAKESMITH_JWT_SECRET } : {}),
      hub: ({ jobs, agents, clock }) => {
        hub = new LocalHub(jobs, agents, clock, {
          later: (ms) => void this.wakeIn(ms),
          log: (level, message, fields) => console[level === "info" ? "log" : "warn"](message, fields ?? {}),
        });
        return hub;
      },
    });
    this.hub = hub as unknown as LocalHub;
    // Woken from hibernation: the sockets survived, the hub's memory of them did not.
    for (const ws of ctx.getWebSockets()) {
      const state = ws.deserializeAttachment() as SessionState | null;
      if (state) this.hub.restore(state, this.wrap(ws));
    }
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname) {
      case "/connect":
        return this.accept(request, url.searchParams.get("agent") ?? "");
      case "/poke":
        this.hub.poke();
        break;
      case "/cancel": {
        const b = (await request.json()) as { agentId: string; jobId: string; fence: number; reason: string };
        this.hub.cancel(b.agentId, b.jobId, b.fence, b.reason);
        break;
      }
      case "/drop": {
        const b = (await request.json()) as { agentId: string; reason: string };
        this.hub.drop(b.agentId, b.reason);
        break;
      }
      default:
        return new Response("not found", { status: 404 });
    }
    await this.hub.settled();
    return new Response(null, { status: 204 });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const state = ws.deserializeAttachment() as SessionState | null;
    if (!state) return ws.close(1011, "lost session state; reconnect");
    const data = typeof message === "string" ? message : new TextDecoder().decode(message);
    await this.hub.message(state.agentId, this.wrap(ws), data);
    // The hello (kinds, capacity, draining) must outlive the next hibernation.
    const current = this.hub.sessionState(state.agentId);
    if (current && current.connectedAt === state.connectedAt) ws.serializeAttachment(current);
    await this.hub.settled();
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    await this.closed(ws);
    try {
      ws.close(code === 1005 ? 1000 : code, reason);
    } catch {
      // Already closed.
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.closed(ws);
  }

  /** A round the hub asked for later (an agent rejected an offer), or a lost one. */
  override async alarm(): Promise<void> {
    this.hub.poke();
    await this.hub.settled();
  }

  private accept(request: Request, agentId: string): Response {
    if (!agentId || request.headers.get("upgrade")?.toLowerCase() !== "websocket")
      return new Response("expected an agent WebSocket upgrade", { status: 400 });
    const pair = new WebSocketPair();
    const [client, server] = [pair[0], pair[1]];
    this.ctx.acceptWebSocket(server, [agentId]);
    this.lastConnectedAt = Math.max(Date.now(), this.lastConnectedAt + 1);
    const state: SessionState = { agentId, connectedAt: this.lastConnectedAt };
    server.serializeAttachment(state);
    this.hub.open(state, this.wrap(server));
    return new Response(null, { status: 101, webSocket: client });
  }

  private async closed(ws: WebSocket): Promise<void> {
    const state = ws.deserializeAttachment() as SessionState | null;
    if (state) await this.hub.closed(state.agentId, this.wrap(ws));
  }

  private async wakeIn(ms: number): Promise<void> {
    const at = Date.now() + ms;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  private wrap(ws: WebSocket): AgentSocket {
    let socket = this.wrappers.get(ws);
    if (!socket) {
      socket = {
        send: (text) => ws.send(text),
        close: (code, reason) => ws.close(code, reason),
      };
      this.wrappers.set(ws, socket);
    }
    return socket;
  }
}
