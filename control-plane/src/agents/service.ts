/**
 * Agents: their tokens and what they announced. The token (`lsa_<random>`) is shown once at
 * creation; only its SHA-256 is stored. Connection state is written by the hub; when the hub
 * itself went away without saying so (a crash), an agent not seen for three heartbeats is
 * reported disconnected.
 */
import { type Clock, newId, randomSecret } from "@lakesmith/shared";
import type { Hello } from "@lakesmith/shared/protocol";
import { and, count, desc, eq, inArray, isNull, ne, sql } from "drizzle-orm";
import { sha256Hex } from "../auth/crypto.ts";
import type { Db } from "../db/index.ts";
import { type Agent, type AgentStatus, agents, jobs } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import type { Page } from "../http/pagination.ts";
import { notFound } from "../http/problem.ts";
import { type Abilities, routingKeys } from "./routing.ts";

export const AGENT_TOKEN_PREFIX = "lsa_";

export interface AgentView {
  id: string;
  name: string;
  token_prefix: string;
  status: AgentStatus;
  version: string | null;
  kinds: string[];
  capabilities: string[];
  /** The storage prefixes its allow list permits, as announced. */
  allow: string[];
  /** The catalog and metastore endpoints it may reach, as announced. */
  endpoints: string[];
  capacity: number;
  connected_at: string | null;
  last_seen_at: string | null;
  created_at: string;
  jobs: { id: string; kind: string; status: string }[];
}

export class AgentService {
  // Reads built once and kept prepared (`db/statement-cache.ts`).
  private readonly reads;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** After this long without a sign of life a connected agent is reported disconnected. */
    private readonly staleAfterMs: number,
  ) {
    const live = isNull(agents.revokedAt);
    this.reads = {
      byTokenHash: preparedSelect(
        db,
        db
          .select()
          .from(agents)
          .where(and(eq(agents.tokenHash, sql.placeholder("tokenHash")), live)),
      ),
      page: preparedSelect(
        db,
        db
          .select()
          .from(agents)
          .where(live)
          .orderBy(desc(agents.createdAt), agents.id)
          .offset(sql.placeholder("offset"))
          .limit(sql.placeholder("limit")),
      ),
      total: preparedSelect(db, db.select({ total: count() }).from(agents).where(live)),
      byId: preparedSelect(
        db,
        db
          .select()
          .from(agents)
          .where(and(eq(agents.id, sql.placeholder("id")), live)),
      ),
      connected: preparedSelect(
        db,
        db
          .select({
            id: agents.id,
            name: agents.name,
            kinds: agents.kinds,
            capabilities: agents.capabilities,
            allow: agents.allow,
            endpoints: agents.endpoints,
            status: agents.status,
            lastSeenAt: agents.lastSeenAt,
          })
          .from(agents)
          .where(and(eq(agents.status, "connected"), live)),
      ),
      // The agents' ids come as one JSON array, so one statement serves any number of them.
      heldJobs: preparedSelect(
        db,
        db
          .select({ owner: jobs.leaseOwner, id: jobs.id, kind: jobs.kind, status: jobs.status })
          .from(jobs)
          .where(
            and(
              sql`${jobs.leaseOwner} in (select value from json_each(${sql.placeholder("owners")}))`,
              inArray(jobs.status, ["offered", "running", "cancelling"]),
            ),
          ),
      ),
    };
  }

  async create(name: string, createdBy: string | null): Promise<{ agent: Agent; token: string }> {
    const token = `${AGENT_TOKEN_PREFIX}${randomSecret(32)}`;
    const [agent] = await this.db
      .insert(agents)
      .values({
        id: newId("agt"),
        name,
        tokenHash: await sha256Hex(token),
        tokenPrefix: token.slice(0, 10),
        createdBy,
        createdAt: this.clock.now(),
      })
      .returning();
    if (!agent) throw new Error("agent insert returned no row");
    return { agent, token };
  }

  /** The agent a token belongs to, unless it was revoked. */
  async authenticate(token: string): Promise<Agent | undefined> {
    if (!token.startsWith(AGENT_TOKEN_PREFIX)) return undefined;
    return this.reads.byTokenHash.get({ tokenHash: await sha256Hex(token) });
  }

  async list(offset: number, limit: number): Promise<Page<AgentView>> {
    const [rows, counted] = await Promise.all([
      this.reads.page.all({ offset, limit }),
      this.reads.total.get(),
    ]);
    return { items: await this.withJobs(rows), total: counted?.total ?? 0, offset, limit };
  }

  async get(id: string): Promise<AgentView> {
    const row = await this.reads.byId.get({ id });
    if (!row) throw notFound("agent", id);
    return (await this.withJobs([row]))[0] as AgentView;
  }

  /** Revokes the token. The caller drops the agent's connection. */
  async revoke(id: string): Promise<void> {
    const now = this.clock.now();
    const revoked = await this.db
      .update(agents)
      .set({ revokedAt: now, status: "disconnected" })
      .where(and(eq(agents.id, id), isNull(agents.revokedAt)))
      .returning({ id: agents.id });
    if (revoked.length === 0) throw notFound("agent", id);
  }

  /**
   * Records what the agent announced. Returns whether its allow list or endpoints differ from its
   * previous connection's (its earlier refusals of jobs may not hold any more).
   */
  async connected(id: string, hello: Hello, at: Date): Promise<boolean> {
    const [before] = await this.db
      .select({ allow: agents.allow, endpoints: agents.endpoints })
      .from(agents)
      .where(eq(agents.id, id));
    await this.db
      .update(agents)
      .set({
        status: hello.draining ? "draining" : "connected",
        version: hello.agent_version,
        kinds: hello.kinds,
        capabilities: hello.capabilities,
        allow: hello.allow,
        endpoints: hello.endpoints,
        capacity: hello.capacity,
        connectedAt: at,
        lastSeenAt: at,
      })
      .where(eq(agents.id, id));
    const same = (a: readonly string[], b: readonly string[]) =>
      [...a].sort().join("\n") === [...b].sort().join("\n");
    return !before || !same(before.allow, hello.allow) || !same(before.endpoints, hello.endpoints);
  }

  async draining(id: string): Promise<void> {
    await this.db
      .update(agents)
      .set({ status: "draining", lastSeenAt: this.clock.now() })
      .where(and(eq(agents.id, id), ne(agents.status, "disconnected")));
  }

  /** Marks the agent disconnected, unless a newer connection (a later `connectedAt`) took over. */
  async disconnected(id: string, connectedAt: Date): Promise<void> {
    await this.db
      .update(agents)
      .set({ status: "disconnected", lastSeenAt: this.clock.now() })
      .where(and(eq(agents.id, id), eq(agents.connectedAt, connectedAt)));
  }

  /** Records a sign of life from these agents. */
  async seen(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .update(agents)
      .set({ lastSeenAt: this.clock.now() })
      .where(inArray(agents.id, [...ids]));
  }

  /** At start-up of a single-process control plane nobody is connected yet. */
  async disconnectAll(): Promise<void> {
    await this.db.update(agents).set({ status: "disconnected" }).where(ne(agents.status, "disconnected"));
  }

  /**
   * What agents that are connected now can do and may use (draining ones take no new work), with
   * their allow lists and endpoints as the keys offers compare.
   */
  async connectedAbilities(): Promise<Abilities> {
    const rows = await this.reads.connected.all();
    return rows
      .filter((r) => !this.isStale(r.lastSeenAt))
      .map((r) => ({
        id: r.id,
        name: r.name,
        kinds: r.kinds,
        capabilities: r.capabilities,
        ...routingKeys({ allow: r.allow, endpoints: r.endpoints }),
      }));
  }

  private isStale(lastSeenAt: Date | null): boolean {
    return !lastSeenAt || this.clock.now().getTime() - lastSeenAt.getTime() > this.staleAfterMs;
  }

  private async withJobs(rows: Agent[]): Promise<AgentView[]> {
    const held = rows.length
      ? await this.reads.heldJobs.all({ owners: JSON.stringify(rows.map((r) => r.id)) })
      : [];
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      token_prefix: r.tokenPrefix,
      status: r.status !== "disconnected" && this.isStale(r.lastSeenAt) ? "disconnected" : r.status,
      version: r.version,
      kinds: r.kinds,
      capabilities: r.capabilities,
      allow: r.allow,
      endpoints: r.endpoints,
      capacity: r.capacity,
      connected_at: r.connectedAt?.toISOString() ?? null,
      last_seen_at: r.lastSeenAt?.toISOString() ?? null,
      created_at: r.createdAt.toISOString(),
      jobs: held.filter((j) => j.owner === r.id).map(({ id, kind, status }) => ({ id, kind, status })),
    }));
  }
}
