/**
 * The jobs of catalog connections, as requests queue them (`kinds.ts` declares them):
 *
 * - A test is queued only while a connected agent may run it (the kind, and every endpoint of the
 *   credentials; else a 503 naming what is missing, and nothing is queued), then the request waits
 *   for its end for up to `preflightWaitMs` (`jobs/wait.ts`, no transaction held).
 * - A sync is refused (409) while another sync of the connection is active or the connection is
 *   inactive, and an incremental one (422) for a type that has none. The batch that inserts it
 *   also sets the connection `running`, records the job as its latest sync and when it was asked
 *   for (the scheduler's clock). The payload stays small whatever the catalog's size: an
 *   incremental sync learns which tables changed part by part as it lists them (`record.ts`),
 *   which also records its tables and its end.
 * - A payload holds decrypted credentials: a failed write is rethrown without its parameters.
 */
import type { Clock } from "@lakesmith/shared";
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  type CatalogSyncPayload,
  type SyncMode,
} from "@lakesmith/shared/catalogs";
import { and, eq } from "drizzle-orm";
import { type Abilities, mayRun } from "../agents/routing.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { type CatalogConnection, catalogConnections, type Job } from "../db/schema.ts";
import { ApiError, conflict, invalidField, notFound } from "../http/problem.ts";
import { type ActiveJob, jobExists, type NewJob } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { TERMINAL_STATUSES } from "../jobs/state.ts";
import { credentialsFrom } from "./credentials.ts";
import type { ConnectionTest } from "./schemas.ts";
import { type CatalogConnectionService, credentialFieldsOf } from "./service.ts";

/** The minimum size setting is in GB of 2^30 bytes. */
const GB = 2 ** 30;

/** How a sync comes to be queued. */
export interface SyncRequest {
  trigger: "manual" | "schedule";
  actor: string | null;
  /** The scheduler's: two ticks that saw the same due connection make one job. */
  dedupeKey?: string;
}

export class CatalogJobService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly config: ConfigService,
    private readonly connections: CatalogConnectionService,
  ) {}

  /**
   * Queues a test of the credentials and waits for the answer; 422 naming a wrong field, 503 when
   * none of the `connected` agents may run it. Nothing is stored but the job.
   */
  async test(
    body: ConnectionTest,
    options: { actor: string | null; connected: Abilities; signal?: AbortSignal },
  ): Promise<{ job: Job; answered: boolean }> {
    const connection = credentialsFrom(body.type, credentialFieldsOf(body));
    const input: NewJob = {
      kind: CATALOG_TEST_KIND,
      payload: { connection },
      trigger: "manual",
      createdBy: options.actor,
    };
    const routing = { kind: CATALOG_TEST_KIND, ...this.jobs.routingOf(input) };
    if (!options.connected.some((agent) => mayRun(agent, routing)))
      throw noAgentFor(routing.endpoints, options.connected);
    const { job } = await this.jobs.enqueue(input);
    const latest = (await this.jobs.waitForEnd(job.id, undefined, options.signal)) ?? job;
    return { job: latest, answered: TERMINAL_STATUSES.includes(latest.status) };
  }

  /** A test job by id; 404 for any other job. */
  async testJob(jobId: string): Promise<Job> {
    const job = await this.jobs.get(jobId);
    if (!job || job.kind !== CATALOG_TEST_KIND) throw notFound("Catalog connection test", jobId);
    return job;
  }

  /**
   * Queues a sync of the connection. 404 unknown connection; 409 inactive, or a sync of it is
   * active (named); 422 on `mode` for an incremental sync of a type that has none.
   */
  async sync(
    id: string,
    asked: { catalog?: string | undefined; mode: SyncMode },
    actor: string | null,
  ): Promise<Job> {
    const row = await this.connections.find(id);
    if (!row) throw notFound("Catalog connection", id);
    if (!row.isActive)
      throw conflict(
        `Catalog connection '${row.name}' is inactive; activate it (PUT /api/v1/catalog-connections/${id} {"is_active": true}) to sync it.`,
      );
    if (asked.mode === "incremental" && row.type !== "workspace")
      throw invalidField(
        "mode",
        `incremental syncs are for workspace connections only; '${row.name}' is a ${row.type} connection: use mode=full`,
      );
    const outcome = await this.queueSync(row, asked, { trigger: "manual", actor });
    if ("job" in outcome) return outcome.job;
    throw overlapping(row, outcome.active);
  }

  /** Queues a sync unless one of the connection is active (then the active one, if it can be named). */
  async queueSync(
    row: CatalogConnection,
    asked: { catalog?: string | undefined; mode: SyncMode },
    how: SyncRequest,
  ): Promise<{ job: Job } | { active: ActiveJob | undefined }> {
    const { values } = await this.config.get();
    const payload: CatalogSyncPayload = {
      connection_id: row.id,
      connection: await this.connections.credentialsOf(row),
      ...(asked.catalog !== undefined ? { catalog: asked.catalog } : {}),
      mode: asked.mode,
      min_size_bytes: Math.floor(values.min_eligible_table_size_gb * GB),
    };
    const now = this.clock.now();
    const input: NewJob = {
      kind: CATALOG_SYNC_KIND,
      payload,
      trigger: how.trigger,
      createdBy: how.actor,
      dedupeKey: how.dedupeKey ?? null,
    };
    return this.jobs.enqueueExclusive(input, (jobId) => [
      this.db
        .update(catalogConnections)
        .set({ syncStatus: "running", lastSyncJobId: jobId, syncRequestedAt: now })
        .where(and(eq(catalogConnections.id, row.id), jobExists(jobId))),
    ]);
  }
}

function overlapping(row: CatalogConnection, active: ActiveJob | undefined): ApiError {
  if (!active)
    return conflict(
      `Another sync of catalog connection '${row.name}' was asked for at the same moment; try again.`,
    );
  return conflict(
    `Catalog connection '${row.name}' has catalog sync '${active.id}' ${active.status}; a connection's syncs never overlap. ` +
      `Wait for it (GET /api/v1/jobs/${active.id}) or cancel it (POST /api/v1/jobs/${active.id}/cancel).`,
  );
}

/** The 503 of a test no connected agent may run: what is missing and what to do about it. */
function noAgentFor(endpoints: readonly string[], connected: Abilities): ApiError {
  const testers = connected.filter((a) => a.kinds.includes(CATALOG_TEST_KIND));
  const why = testers.length
    ? `the connected agents that run catalog connection tests may reach ${testers
        .map((a) => `${a.name}: ${a.endpoints.join(", ") || "no endpoint"}`)
        .join("; ")}`
    : "no connected agent runs catalog connection tests";
  return new ApiError(
    503,
    `No connected agent may reach ${endpoints.join(" and ")}: ${why}. ` +
      "Connect an agent whose --allow-endpoints (LAKESMITH_AGENT_ALLOW_ENDPOINTS) covers them and try again; nothing was queued.",
  );
}
