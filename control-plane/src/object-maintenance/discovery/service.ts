/**
 * Discovery attempts of a location (the API's "discovery schedules") and their transitions.
 *
 * - Queue (manual `POST .../discover`, at creation with `run_discovery_immediately`, or the
 *   scheduler at the cadence): one active attempt (queued, running, paused) per location; a second
 *   is a 409 naming it. use_as_registered locations have no discovery (422); archived ones are not
 *   processed (409). The job and the attempt are inserted in one batch, the attempt guarded by "no
 *   other active attempt", the job withdrawn when the attempt was not inserted, so two requests at
 *   once make one attempt. A Pending location becomes Discovering.
 * - The payload carries the claimed table keys inside the location (registered tables and live
 *   synced catalog tables) and the filters' settings as they are now.
 * - Transitions (409 otherwise, naming the status):
 *   pause: queued or running → paused; the job is cancelled, the bins done stay done.
 *   resume: paused → queued; a new job reads the same report, passing over the bins done and skipped.
 *   restart: any → queued; the job cancelled, bins and aggregates cleared, a new job from the newest report.
 *   complete: queued, running or paused → completed from what is aggregated so far (`record.ts`,
 *   `finalize`); the job cancelled. Prefixes are marked missing only when every bin was read.
 *   skip-bin: queued, running or paused, a bin of the plan not read yet → skipped (its rows dropped;
 *   the running job leaves it out at its next part); the attempt's status does not change.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { DISCOVERY_KIND, type DiscoveryPayload, DiscoveryPayloadSchema } from "@lakesmith/shared/discovery";
import { and, asc, count, desc, eq, inArray, isNull, type SQL, sql } from "drizzle-orm";
import type { ConfigService } from "../../config/service.ts";
import type { Db } from "../../db/index.ts";
import { insertSelect } from "../../db/insert-select.ts";
import {
  type DiscoveredPrefix,
  type DiscoveryFilter,
  type DiscoverySchedule,
  discoveredPrefixes,
  discoveryAggregates,
  discoveryBins,
  discoverySchedules,
  jobs as jobRows,
  type Location,
  locations,
} from "../../db/schema.ts";
import type { Page } from "../../http/pagination.ts";
import { ApiError, conflict, invalidField, notFound } from "../../http/problem.ts";
import type { CancelService } from "../../jobs/cancel.ts";
import type { BatchItem } from "../../jobs/kinds.ts";
import type { JobService } from "../../jobs/service.ts";
import { claimedKeys } from "./claims.ts";
import { finalize, settleLocation } from "./record.ts";

const MB = 2 ** 20;
export const ACTIVE_DISCOVERY = ["queued", "running", "paused"] as const;
type Trigger = DiscoverySchedule["trigger"];

export interface QueueRequest {
  trigger: Trigger;
  actor: string | null;
  /** The scheduler's: two ticks that saw the same due location make one attempt. */
  dedupeKey?: string;
}

export class DiscoveryService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly cancel: CancelService,
    private readonly config: ConfigService,
  ) {}

  /** `POST .../discover`: 404, 422 (use_as_registered), 409 (archived, or an attempt is active). */
  async discover(locationId: string, actor: string | null): Promise<DiscoverySchedule> {
    const location = await this.location(locationId);
    const attempt = await this.queue(location, { trigger: "manual", actor });
    if (!attempt) throw await this.busy(location);
    return attempt;
  }

  /** Queues an attempt of an inventory location; undefined when another is active. */
  async queue(location: Location, how: QueueRequest): Promise<DiscoverySchedule | undefined> {
    if (location.discoveryMethod !== "inventory_report" || !location.inventoryUri)
      throw invalidField(
        "discovery_method",
        `location '${location.name}' is use_as_registered: its URI is its one prefix, nothing to discover`,
      );
    if (location.status === "Archived")
      throw conflict(
        `Location '${location.name}' is archived; un-archive it (PATCH status Active) to discover it.`,
      );
    const attemptId = newId("dsc");
    const payload = await this.payload(location, attemptId);
    const now = this.clock.now();
    const created = await this.withJob(
      payload,
      how,
      (jobId) => [
        insertSelect(
          this.db,
          discoverySchedules,
          {
            id: sql`${attemptId}`,
            locationId: sql`${location.id}`,
            status: sql`'queued'`,
            trigger: sql`${how.trigger}`,
            jobId: sql`${jobId}`,
            report: sql`null`,
            binsTotal: sql`null`,
            binsDone: sql`0`,
            binsSkipped: sql`0`,
            totalBytes: sql`null`,
            doneBinBytes: sql`0`,
            filesSeen: sql`0`,
            bytesSeen: sql`0`,
            objectsScanned: sql`0`,
            error: sql`null`,
            createdBy: sql`${how.actor}`,
            createdAt: sql`${now.getTime()}`,
            startedAt: sql`null`,
            endedAt: sql`null`,
            updatedAt: sql`${now.getTime()}`,
          },
          sql`where exists (select 1 from ${jobRows} where ${jobRows.id} = ${jobId})
          and exists (select 1 from ${locations} where ${locations.id} = ${location.id} and ${locations.status} != 'Archived')
          and not exists (select 1 from ${discoverySchedules} d where d.location_id = ${location.id} and d.status in ('queued', 'running', 'paused'))`,
        ),
        this.db
          .update(locations)
          .set({ status: "Discovering", updatedAt: now })
          .where(
            and(
              eq(locations.id, location.id),
              eq(locations.status, "Pending"),
              this.attemptHasJob(attemptId, jobId),
            ),
          ),
      ],
      attemptId,
    );
    return created ? this.get(attemptId) : undefined;
  }

  async list(locationId: string, offset: number, limit: number): Promise<Page<DiscoverySchedule>> {
    await this.location(locationId);
    const where = eq(discoverySchedules.locationId, locationId);
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(discoverySchedules)
        .where(where)
        .orderBy(desc(discoverySchedules.createdAt), desc(discoverySchedules.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(discoverySchedules).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  async get(id: string): Promise<DiscoverySchedule> {
    const [row] = await this.db.select().from(discoverySchedules).where(eq(discoverySchedules.id, id));
    if (!row) throw notFound("Discovery schedule", id);
    return row;
  }

  /** The plan's bins in order, with how far each got. */
  async bins(id: string) {
    return this.db
      .select()
      .from(discoveryBins)
      .where(eq(discoveryBins.attemptId, id))
      .orderBy(asc(discoveryBins.position));
  }

  async pause(id: string): Promise<DiscoverySchedule> {
    const attempt = await this.moved(id, ["queued", "running"], "paused", "pause");
    await this.stopJob(attempt, "the discovery was paused");
    return this.get(id);
  }

  async resume(id: string): Promise<DiscoverySchedule> {
    const attempt = await this.get(id);
    if (attempt.status !== "paused") throw this.invalid(attempt, "resume", "a paused one");
    const location = await this.location(attempt.locationId);
    const bins = await this.bins(id);
    const payload = await this.payload(location, id, {
      report: attempt.report,
      done: bins.filter((b) => b.status === "done").map((b) => b.binId),
      skipped: bins.filter((b) => b.status === "skipped").map((b) => b.binId),
    });
    const now = this.clock.now();
    const resumed = await this.withJob(
      payload,
      { trigger: attempt.trigger, actor: attempt.createdBy },
      (jobId) => [
        this.db
          .update(discoverySchedules)
          .set({ status: "queued", jobId, error: null, updatedAt: now })
          .where(and(eq(discoverySchedules.id, id), eq(discoverySchedules.status, "paused"))),
      ],
      id,
    );
    if (!resumed) throw this.invalid(await this.get(id), "resume", "a paused one");
    return this.get(id);
  }

  async restart(id: string): Promise<DiscoverySchedule> {
    const attempt = await this.get(id);
    const location = await this.location(attempt.locationId);
    if (location.status === "Archived")
      throw conflict(`Location '${location.name}' is archived; un-archive it to discover it.`);
    const payload = await this.payload(location, id);
    const now = this.clock.now();
    const before = attempt.jobId;
    const restarted = await this.withJob(
      payload,
      { trigger: attempt.trigger, actor: attempt.createdBy },
      (jobId) => [
        this.db.delete(discoveryBins).where(eq(discoveryBins.attemptId, id)),
        this.db.delete(discoveryAggregates).where(eq(discoveryAggregates.attemptId, id)),
        this.db.delete(discoveredPrefixes).where(eq(discoveredPrefixes.attemptId, id)),
        this.db
          .update(discoverySchedules)
          .set({
            status: "queued",
            jobId,
            report: null,
            binsTotal: null,
            binsDone: 0,
            binsSkipped: 0,
            totalBytes: null,
            doneBinBytes: 0,
            filesSeen: 0,
            bytesSeen: 0,
            objectsScanned: 0,
            error: null,
            startedAt: null,
            endedAt: null,
            updatedAt: now,
          })
          .where(
            and(
              eq(discoverySchedules.id, id),
              // Another attempt of the location may have started since this one ended.
              sql`not exists (select 1 from ${discoverySchedules} d where d.location_id = ${location.id} and d.id != ${id} and d.status in ('queued', 'running', 'paused'))`,
            ),
          ),
      ],
      id,
    );
    if (!restarted) throw await this.busy(location);
    if (before) await this.stopJobId(before, "the discovery was restarted");
    return this.get(id);
  }

  async complete(id: string): Promise<DiscoverySchedule> {
    const attempt = await this.get(id);
    if (!(ACTIVE_DISCOVERY as readonly string[]).includes(attempt.status))
      throw this.invalid(attempt, "complete", "a queued, running or paused one");
    const payload = await this.currentPayload(attempt);
    const active = sql`exists (select 1 from ${discoverySchedules} where ${discoverySchedules.id} = ${id} and ${discoverySchedules.status} in ('queued', 'running', 'paused'))`;
    await this.db.batch(finalize(this.db, payload, this.clock.now(), active) as [BatchItem, ...BatchItem[]]);
    const after = await this.get(id);
    if (after.status !== "completed")
      throw this.invalid(after, "complete", "a queued, running or paused one");
    await this.stopJob(attempt, "the discovery was completed");
    return after;
  }

  async skipBin(id: string, binId: string): Promise<DiscoverySchedule> {
    const attempt = await this.get(id);
    if (!(ACTIVE_DISCOVERY as readonly string[]).includes(attempt.status))
      throw this.invalid(attempt, "skip a bin of", "a queued, running or paused one");
    const [bin] = await this.db
      .select()
      .from(discoveryBins)
      .where(and(eq(discoveryBins.attemptId, id), eq(discoveryBins.binId, binId)));
    if (!bin)
      throw notFound(
        "Bin",
        `${binId}' of discovery schedule '${id}' (its bins are known once the discovery has read its report`,
      );
    if (bin.status === "skipped") return attempt;
    if (bin.status === "done")
      throw conflict(`Bin '${binId}' was read already; restart the discovery to leave it out.`);
    const skip = and(
      eq(discoveryBins.attemptId, id),
      eq(discoveryBins.binId, binId),
      inArray(discoveryBins.status, ["pending", "reading"]),
    );
    const skipped = sql`(select count(*) from ${discoveryBins} b where b.attempt_id = ${id} and b.status = 'skipped')`;
    await this.db.batch([
      this.db.update(discoveryBins).set({ status: "skipped" }).where(skip),
      this.db
        .update(discoverySchedules)
        .set({ binsSkipped: skipped, updatedAt: this.clock.now() })
        .where(eq(discoverySchedules.id, id)),
      this.db
        .delete(discoveryAggregates)
        .where(and(eq(discoveryAggregates.attemptId, id), eq(discoveryAggregates.binId, binId))),
    ]);
    return this.get(id);
  }

  /** The latest completed attempt's prefixes; `filter` one outcome, `survivors` none. */
  async discovered(
    locationId: string,
    filter: DiscoveryFilter | "survivors" | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<DiscoveredPrefix> & { attempt: DiscoverySchedule | null }> {
    await this.location(locationId);
    const [attempt] = await this.db
      .select()
      .from(discoverySchedules)
      .where(and(eq(discoverySchedules.locationId, locationId), eq(discoverySchedules.status, "completed")))
      .orderBy(desc(discoverySchedules.endedAt), desc(discoverySchedules.id))
      .limit(1);
    if (!attempt) return { items: [], total: 0, offset, limit, attempt: null };
    const where = and(
      eq(discoveredPrefixes.attemptId, attempt.id),
      filter === "survivors"
        ? isNull(discoveredPrefixes.filter)
        : filter
          ? eq(discoveredPrefixes.filter, filter)
          : undefined,
    );
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(discoveredPrefixes)
        .where(where)
        .orderBy(asc(discoveredPrefixes.uri))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(discoveredPrefixes).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit, attempt };
  }

  /** Deleting a location (run `cancelActive` first): its attempts and their results go with it. */
  deleteStatements(locationId: string): BatchItem[] {
    const attempts = sql`select id from ${discoverySchedules} where location_id = ${locationId}`;
    return [
      this.db.delete(discoveryBins).where(sql`${discoveryBins.attemptId} in (${attempts})`),
      this.db.delete(discoveryAggregates).where(sql`${discoveryAggregates.attemptId} in (${attempts})`),
      this.db.delete(discoveredPrefixes).where(eq(discoveredPrefixes.locationId, locationId)),
      this.db.delete(discoverySchedules).where(eq(discoverySchedules.locationId, locationId)),
    ];
  }

  /** Archiving or deleting a location: its active attempt is cancelled, and its job. */
  async cancelActive(locationId: string, reason: string): Promise<void> {
    const now = this.clock.now();
    const stopped = await this.db
      .update(discoverySchedules)
      .set({ status: "cancelled", error: reason, endedAt: now, updatedAt: now })
      .where(
        and(
          eq(discoverySchedules.locationId, locationId),
          inArray(discoverySchedules.status, [...ACTIVE_DISCOVERY]),
        ),
      )
      .returning();
    for (const attempt of stopped) await this.stopJob(attempt, reason);
    if (stopped.length > 0)
      await this.db.batch(settleLocation(this.db, locationId, now, sql`1`) as [BatchItem]);
  }

  async location(id: string): Promise<Location> {
    const [row] = await this.db.select().from(locations).where(eq(locations.id, id));
    if (!row) throw notFound("Location", id);
    return row;
  }

  /** The payload of a new job of the attempt: resumed ones read the same report, passing over bins. */
  private async payload(
    location: Location,
    attemptId: string,
    resume?: { report: string | null; done: string[]; skipped: string[] },
  ): Promise<DiscoveryPayload> {
    const { values } = await this.config.get();
    return DiscoveryPayloadSchema.parse({
      location_id: location.id,
      attempt_id: attemptId,
      location_uri: location.uri,
      inventory_uri: resume?.report ?? location.inventoryUri,
      claimed: await claimedKeys(this.db, location.uri),
      skip_age_days: location.skipAgeDays,
      min_prefix_bytes: Math.round(values.min_discovery_prefix_size_mb * MB),
      skip_bins: resume?.skipped ?? [],
      done_bins: resume?.done ?? [],
    });
  }

  /** The attempt's current job's payload (the settings it runs with), or a fresh one. */
  private async currentPayload(attempt: DiscoverySchedule): Promise<DiscoveryPayload> {
    if (attempt.jobId) {
      const job = await this.jobs.get(attempt.jobId);
      const parsed = DiscoveryPayloadSchema.safeParse(job?.payload);
      if (parsed.success) return parsed.data;
    }
    return this.payload(await this.location(attempt.locationId), attempt.id);
  }

  /**
   * Inserts a job of `payload` with `statements(jobId)` in one batch; the job is withdrawn when the
   * attempt does not name it afterwards (a statement's guard failed). Returns whether it stayed.
   */
  private async withJob(
    payload: DiscoveryPayload,
    how: QueueRequest,
    statements: (jobId: string) => BatchItem[],
    attemptId: string,
  ): Promise<boolean> {
    const jobId = newId("job");
    const insert = this.jobs.insertStatement(
      {
        kind: DISCOVERY_KIND,
        payload,
        trigger: how.trigger === "creation" ? "manual" : how.trigger,
        createdBy: how.actor,
        ...(how.dedupeKey ? { dedupeKey: how.dedupeKey } : {}),
      },
      jobId,
    );
    const withdraw = this.db
      .delete(jobRows)
      .where(and(eq(jobRows.id, jobId), sql`not ${this.attemptHasJob(attemptId, jobId)}`))
      .returning({ id: jobRows.id });
    const results = await this.db.batch([insert, ...statements(jobId), withdraw] as [
      BatchItem,
      ...BatchItem[],
    ]);
    const [inserted] = results[0] as unknown[];
    const withdrawn = results[results.length - 1] as unknown[];
    const stayed = inserted !== undefined && withdrawn.length === 0;
    if (stayed) this.jobs.notifyWork();
    return stayed;
  }

  private attemptHasJob(attemptId: string, jobId: string): SQL {
    return sql`exists (select 1 from ${discoverySchedules} where ${discoverySchedules.id} = ${attemptId} and ${discoverySchedules.jobId} = ${jobId})`;
  }

  /** Moves the attempt `from` → `to`; 409 naming its status otherwise. */
  private async moved(
    id: string,
    from: DiscoverySchedule["status"][],
    to: DiscoverySchedule["status"],
    verb: string,
  ): Promise<DiscoverySchedule> {
    const attempt = await this.get(id);
    const [updated] = await this.db
      .update(discoverySchedules)
      .set({ status: to, updatedAt: this.clock.now() })
      .where(and(eq(discoverySchedules.id, id), inArray(discoverySchedules.status, from)))
      .returning();
    if (!updated) throw this.invalid(await this.get(id), verb, `a ${from.join(" or ")} one`);
    return { ...attempt, ...updated, jobId: attempt.jobId };
  }

  private async stopJob(attempt: DiscoverySchedule, reason: string): Promise<void> {
    if (attempt.jobId) await this.stopJobId(attempt.jobId, reason);
  }

  private async stopJobId(jobId: string, reason: string): Promise<void> {
    try {
      await this.cancel.cancel(jobId, reason);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 409 || err.status === 404)) return;
      throw err;
    }
  }

  private invalid(attempt: DiscoverySchedule, verb: string, allowed: string): ApiError {
    return conflict(
      `Discovery schedule '${attempt.id}' is ${attempt.status}; only ${allowed} can ${verb === "skip a bin of" ? "have a bin skipped" : `be ${pastOf(verb)}`}.`,
    );
  }

  private async busy(location: Location): Promise<ApiError> {
    const [active] = await this.db
      .select({ id: discoverySchedules.id, status: discoverySchedules.status })
      .from(discoverySchedules)
      .where(
        and(
          eq(discoverySchedules.locationId, location.id),
          inArray(discoverySchedules.status, [...ACTIVE_DISCOVERY]),
        ),
      );
    return conflict(
      active
        ? `Location '${location.name}' has a discovery ${active.status} ('${active.id}'); pause, resume, restart or complete it instead.`
        : `Location '${location.name}' could not be discovered now; try again.`,
    );
  }
}

function pastOf(verb: string): string {
  return { pause: "paused", resume: "resumed", complete: "completed" }[verb] ?? `${verb}ed`;
}
