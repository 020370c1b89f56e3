/**
 * Onboarding: the control-plane side of inspecting a new table. Creating a table queues an
 * `onboarding` job (status `pending`); an agent inspects the table and completes the job with the
 * recipe it found, or fails it with a reason. The job's end moves the table, in the same batch as
 * the job's own status change (a finish hook):
 *
 *   pending | retry ──job succeeded (valid recipe)──▶ active   (recipe stored, terminal)
 *   pending | retry ──job failed or cancelled──────▶ failed   (reason stored)
 *   failed ──POST /onboarding/{id}/retry──▶ retry             (a new onboarding job is queued)
 *
 * A job that fails with a retryable error and has attempts left goes back to the queue and the table
 * stays pending; the status shows that attempt's error and when the next one starts (`retrying`). A
 * failure the agent reports as permanent (no Delta log at the URI) fails the table at once. Only
 * the table's latest onboarding job can move it, so a late result of an earlier job never
 * overwrites a retry's. The job kind and its finish hook are declared in `kind.ts`.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { ONBOARDING_KIND, type OnboardingPayload } from "@lakesmith/shared/jobs";
import { and, eq, isNull } from "drizzle-orm";
import type { CatalogTableRefs } from "../catalog-connections/table-ref.ts";
import type { Db } from "../db/index.ts";
import { type Job, type LakeTable, lakeTables } from "../db/schema.ts";
import { conflict, notFound } from "../http/problem.ts";
import { jobOnTable } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import { TERMINAL_STATUSES } from "../jobs/state.ts";

export interface OnboardingState {
  table: LakeTable;
  job: Job | undefined;
  /** Pending or retry after an attempt that did not finish: why, and when the next one starts. */
  retrying: { error: string; nextAttemptAt: Date | null } | undefined;
}

/**
 * The unfinished attempt a not-yet-ended onboarding job carries (its error: a failure, a lapsed
 * lease, a refusal). A queued job with an error waits for its next attempt (`notBefore`); a running
 * one is that next attempt, and the error stays until it ends.
 */
function retryingOf(table: LakeTable, job: Job | undefined): OnboardingState["retrying"] {
  if (!job?.error || TERMINAL_STATUSES.includes(job.status)) return undefined;
  if (table.onboardingStatus !== "pending" && table.onboardingStatus !== "retry") return undefined;
  return { error: job.error, nextAttemptAt: job.status === "queued" ? job.notBefore : null };
}

export class OnboardingService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly jobs: JobService,
    private readonly catalogRefs: CatalogTableRefs,
  ) {}

  /**
   * A new onboarding job for a table, as an id and an insert to batch with the caller's writes; a
   * catalog-managed table's carries its catalog reference.
   */
  async job(
    table: Pick<
      LakeTable,
      "id" | "name" | "uri" | "format" | "priority" | "catalogConnectionId" | "catalogFullName"
    >,
    options: { trigger: string; createdBy: string | null; dedupeKey?: string },
  ) {
    const id = newId("job");
    const catalog = await this.catalogRefs.of(table);
    const payload: OnboardingPayload = {
      table_id: table.id,
      uri: table.uri,
      format: table.format,
      ...(catalog ? { catalog } : {}),
    };
    const insert = this.jobs.insertStatement(
      jobOnTable(table, {
        kind: ONBOARDING_KIND,
        payload,
        trigger: options.trigger,
        createdBy: options.createdBy,
        dedupeKey: options.dedupeKey ?? null,
      }),
      id,
    );
    return { id, insert };
  }

  async status(tableId: string): Promise<OnboardingState> {
    const [table] = await this.db.select().from(lakeTables).where(eq(lakeTables.id, tableId));
    if (!table) throw notFound("Table", tableId);
    const job = table.onboardingJobId ? await this.jobs.get(table.onboardingJobId) : undefined;
    return { table, job, retrying: retryingOf(table, job) };
  }

  /** Queues onboarding again for a failed table; any other status is a 409 naming it. */
  async retry(tableId: string, actor: string | null): Promise<OnboardingState> {
    const { table } = await this.status(tableId);
    if (table.onboardingStatus !== "failed") throw notRetryable(table);
    const job = await this.job(table, {
      trigger: "onboarding_retry",
      createdBy: actor,
      // Two retries racing on the same failed job queue one new job between them.
      dedupeKey: `onboarding:${table.id}:after:${table.onboardingJobId ?? "none"}`,
    });
    const now = this.clock.now();
    const [, moved] = await this.db.batch([
      job.insert,
      this.db
        .update(lakeTables)
        .set({ onboardingStatus: "retry", onboardingJobId: job.id, onboardingError: null, updatedAt: now })
        .where(
          and(
            eq(lakeTables.id, table.id),
            eq(lakeTables.onboardingStatus, "failed"),
            table.onboardingJobId
              ? eq(lakeTables.onboardingJobId, table.onboardingJobId)
              : isNull(lakeTables.onboardingJobId),
          ),
        )
        .returning(),
    ]);
    if (!moved[0]) {
      const current = await this.status(tableId);
      throw notRetryable(current.table);
    }
    this.jobs.notifyWork();
    return this.status(tableId);
  }
}

function notRetryable(table: LakeTable) {
  return conflict(
    `Onboarding of table '${table.name}' is '${table.onboardingStatus}'; only failed onboarding can be retried.` +
      (table.onboardingStatus === "active" ? " The table is onboarded already." : " It is queued already."),
  );
}
