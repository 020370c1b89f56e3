/**
 * A managed prefix's conversion and maintenance jobs (document 1: actions and runs).
 *
 * - Every job is one `prefix_runs` row beside its job, written in the same batch (guarded by the
 *   job's existence), with why it ran: `schedule` (the policy's convert schedule, `scheduled.ts`)
 *   or `action` (an ad-hoc ActionRequest). Runs list them all, actions the ad-hoc ones; the job row
 *   holds the status and the metrics.
 * - An action needs an active prefix whose active policy configures the step (`enabled` governs
 *   the schedule only): 422 naming `management_state` or `action` otherwise. One that would overlap
 *   a conversion or removal of the prefix still active is a 409 naming that job; a scheduled run
 *   waits for it instead.
 * - Payloads are read from the policy version and the location when queued: the location's skip
 *   age (2 days for a prefix whose location was deleted) and, for a removal, the paths whose
 *   deletions were recovered (never proposed again).
 */
import { newId } from "@lakesmith/shared";
import {
  CONVERT_KIND,
  type ConvertPayload,
  DEFAULT_MAX_RUN_BYTES,
  REMOVE_INPUTS_KIND,
  type RemoveInputsPayload,
} from "@lakesmith/shared/prefix-conversion";
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/index.ts";
import { insertSelect } from "../../db/insert-select.ts";
import {
  type Job,
  jobs,
  locations,
  type Prefix,
  type PrefixAction,
  type PrefixPolicy,
  type PrefixRun,
  pendingDeletions,
  prefixes,
  prefixPolicies,
  prefixRuns,
} from "../../db/schema.ts";
import type { Page } from "../../http/pagination.ts";
import { conflict, invalidField, notFound } from "../../http/problem.ts";
import { jobExists, type NewJob } from "../../jobs/enqueue.ts";
import type { BatchItem } from "../../jobs/kinds.ts";
import type { JobService } from "../../jobs/service.ts";
import type { PolicyUpsert } from "../schemas.ts";

const DEFAULT_SKIP_AGE_DAYS = 2;

export interface RunRequest {
  trigger: PrefixRun["trigger"];
  actor: string | null;
  /** A schedule slot's key: at most one job per key. */
  dedupeKey?: string;
}

export class PrefixRunService {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobService,
  ) {}

  /** An ad-hoc action: queues the step's job now (409 beside an active one). */
  async act(
    prefixId: string,
    action: PrefixAction,
    actor: string | null,
  ): Promise<{ run: PrefixRun; job: Job }> {
    const prefix = await this.prefix(prefixId);
    if (prefix.managementState !== "active")
      throw invalidField(
        "management_state",
        `prefix ${prefix.uri} is ${prefix.managementState}${prefix.stateReason ? ` (${prefix.stateReason})` : ""}; enable it first (POST .../enable)`,
      );
    const [policy] = await this.db
      .select()
      .from(prefixPolicies)
      .where(and(eq(prefixPolicies.prefixId, prefixId), eq(prefixPolicies.active, true)));
    const body = policy?.policy as PolicyUpsert | undefined;
    if (!policy || !body?.[action])
      throw invalidField(
        "action",
        `the prefix's policy has no ${action} step; PUT .../policy with one (${action === "convert" ? "convert.target_prefix" : "remove_inputs.retention_days"})`,
      );
    const newJob = await this.jobFor(prefix, policy, action, { trigger: "action", actor });
    const outcome = await this.jobs.enqueueExclusive(newJob, (id) => [
      this.runRow(id, prefix.id, action, policy, { trigger: "action", actor }),
    ]);
    if ("active" in outcome)
      throw conflict(
        `A ${outcome.active?.kind ?? "conversion or removal"} job of this prefix is ${outcome.active?.status ?? "active"} (GET /api/v1/jobs/${outcome.active?.id ?? ""}); try again once it ends.`,
      );
    return { run: await this.run(outcome.job.id), job: outcome.job };
  }

  /** The job and its run row, for a caller's batch (the scheduler's): queued even beside an active job. */
  async statements(
    prefix: Prefix,
    policy: PrefixPolicy,
    action: PrefixAction,
    how: RunRequest,
  ): Promise<BatchItem[]> {
    const id = newId("job");
    const input = await this.jobFor(prefix, policy, action, how);
    return [this.jobs.insertStatement(input, id), this.runRow(id, prefix.id, action, policy, how)];
  }

  /** The prefix's runs (or, with `trigger`, its actions), newest first, each with its job. */
  async list(
    prefixId: string,
    trigger: PrefixRun["trigger"] | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<{ run: PrefixRun; job: Job | null }>> {
    await this.prefix(prefixId);
    const where = and(
      eq(prefixRuns.prefixId, prefixId),
      trigger ? eq(prefixRuns.trigger, trigger) : undefined,
    );
    const [items, [total]] = await Promise.all([
      this.db
        .select({ run: prefixRuns, job: jobs })
        .from(prefixRuns)
        .leftJoin(jobs, eq(jobs.id, prefixRuns.jobId))
        .where(where)
        .orderBy(desc(prefixRuns.createdAt), desc(sql`${prefixRuns}.rowid`))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(prefixRuns).where(where),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  private async run(jobId: string): Promise<PrefixRun> {
    const [run] = await this.db.select().from(prefixRuns).where(eq(prefixRuns.jobId, jobId));
    if (!run) throw new Error(`the run of job ${jobId} was not recorded`);
    return run;
  }

  private async prefix(id: string): Promise<Prefix> {
    const [row] = await this.db.select().from(prefixes).where(eq(prefixes.id, id));
    if (!row) throw notFound("Prefix", id);
    return row;
  }

  private runRow(
    jobId: string,
    prefixId: string,
    action: PrefixAction,
    policy: PrefixPolicy,
    how: RunRequest,
  ) {
    return insertSelect(
      this.db,
      prefixRuns,
      {
        jobId: sql`${jobId}`,
        prefixId: sql`${prefixId}`,
        action: sql`${action}`,
        trigger: sql`${how.trigger}`,
        policyVersion: sql`${policy.version}`,
        requestedBy: sql`${how.actor}`,
        createdAt: sql`(select created_at from ${jobs} where id = ${jobId})`,
      },
      sql`where ${jobExists(jobId)}`,
    ).onConflictDoNothing();
  }

  private async jobFor(
    prefix: Prefix,
    policy: PrefixPolicy,
    action: PrefixAction,
    how: RunRequest,
  ): Promise<NewJob> {
    const body = policy.policy as PolicyUpsert;
    const convert = body.convert;
    if (!convert) throw invalidField("action", "the prefix's policy converts nothing");
    const base = { prefix_id: prefix.id, source_uri: prefix.uri, target_uri: convert.target_prefix };
    const common = {
      trigger: how.trigger === "schedule" ? "schedule" : "manual",
      createdBy: how.actor,
      dedupeKey: how.dedupeKey ?? null,
    };
    if (action === "convert") {
      const payload: ConvertPayload = {
        ...base,
        target_file_size_mb: convert.target_file_size_mb,
        skip_age_days: await this.skipAgeDays(prefix),
        max_run_bytes: DEFAULT_MAX_RUN_BYTES,
        policy_version: policy.version,
      };
      return { kind: CONVERT_KIND, payload, ...common };
    }
    const keep = await this.db
      .selectDistinct({ path: pendingDeletions.path })
      .from(pendingDeletions)
      .where(and(eq(pendingDeletions.prefixId, prefix.id), eq(pendingDeletions.status, "RECOVERED")));
    const payload: RemoveInputsPayload = {
      ...base,
      retention_days: body.remove_inputs?.retention_days ?? 30,
      keep: keep.map((k) => k.path),
    };
    return { kind: REMOVE_INPUTS_KIND, payload, ...common };
  }

  private async skipAgeDays(prefix: Prefix): Promise<number> {
    if (!prefix.locationId) return DEFAULT_SKIP_AGE_DAYS;
    const [location] = await this.db
      .select({ skipAgeDays: locations.skipAgeDays })
      .from(locations)
      .where(eq(locations.id, prefix.locationId));
    return location?.skipAgeDays ?? DEFAULT_SKIP_AGE_DAYS;
  }
}
