/**
 * Actions on a catalog table that has no onboarded Lakesmith table yet. The first action onboards
 * one (`POST /api/v1/tables` with the catalog link) and its job is queued held:
 *
 * - held = `status queued`, `trigger action`, `not_before` = `ONBOARDING_HOLD` (never offered), and
 *   `progress` = `{ waiting_for: "onboarding", release_at }` (the action's `schedule.at`, or null).
 * - Each scheduler tick (`tick`), for up to `limit` held jobs (found by the dispatch index
 *   `(status, kind, priority, not_before)`, a few probes however long the queue):
 *   onboarding `active` → the payload takes the recipe (and a compress its cluster columns, as a
 *   manual crunch would have), `not_before` = `release_at` or now, progress cleared, in one update
 *   guarded by the hold (a tick racing another releases it once);
 *   onboarding `failed`, or the table deleted → the job is cancelled with the reason;
 *   `pending` or `retry` → left held.
 * - A tick that dies leaves the jobs held; the next one releases them (the step reads the queue).
 */
import { and, eq, inArray } from "drizzle-orm";
import { cancelQuietly } from "../catalog-connections/service.ts";
import type { Db } from "../db/index.ts";
import { type Job, jobs, type LakeTable, PRIORITIES } from "../db/schema.ts";
import type { CancelService } from "../jobs/cancel.ts";
import type { Queueing } from "../jobs/enqueue.ts";
import type { JobService } from "../jobs/service.ts";
import type { TableService } from "../tables/service.ts";
import { ACTION_JOB_KINDS, ACTION_TRIGGER } from "./kinds.ts";

/** The `not_before` of a job held for its table's onboarding (a day before the catalog hold's). */
export const ONBOARDING_HOLD = new Date(Date.UTC(9999, 11, 30));

export interface HoldTick {
  released: number;
  cancelled: number;
}

/** How an action waiting for its table's onboarding is queued; `at` is its `schedule.at`. */
export function heldQueueing(at: Date | undefined): Queueing {
  return {
    trigger: ACTION_TRIGGER,
    notBefore: ONBOARDING_HOLD,
    progress: { waiting_for: "onboarding", release_at: at?.toISOString() ?? null },
  };
}

/** Whether `job` is held for its table's onboarding. */
export const isHeld = (job: Job) =>
  job.status === "queued" && job.notBefore.getTime() === ONBOARDING_HOLD.getTime();

const held = and(
  eq(jobs.status, "queued"),
  inArray(jobs.kind, ACTION_JOB_KINDS),
  inArray(jobs.priority, [...PRIORITIES]),
  eq(jobs.notBefore, ONBOARDING_HOLD),
  eq(jobs.trigger, ACTION_TRIGGER),
);

export class OnboardingHold {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobService,
    private readonly tables: TableService,
    private readonly cancel: CancelService,
    private readonly limit = 500,
  ) {}

  /** Releases the held jobs whose table is onboarded, and cancels those whose onboarding failed. */
  async tick(now: Date): Promise<HoldTick> {
    const rows = await this.db.select().from(jobs).where(held).limit(this.limit);
    const outcome: HoldTick = { released: 0, cancelled: 0 };
    for (const job of rows) {
      const table = job.tableId ? await this.tables.find(job.tableId) : undefined;
      const refusal = !table
        ? `its table '${job.tableId}' was deleted before its onboarding ended`
        : table.onboardingStatus === "failed"
          ? `onboarding of table '${table.name}' failed: ${table.onboardingError ?? "no reason given"} (POST /api/v1/onboarding/${table.id}/retry, then retry the action)`
          : undefined;
      if (refusal) {
        if (await cancelQuietly(this.cancel, job.id, refusal, { recordReason: true })) outcome.cancelled++;
        continue;
      }
      if (table?.onboardingStatus !== "active") continue;
      const releaseAt = (job.progress as { release_at?: string | null } | null)?.release_at;
      const at = releaseAt ? new Date(releaseAt) : now;
      const [released] = await this.db
        .update(jobs)
        .set({
          payload: withRecipe(job, table),
          notBefore: at > now ? at : now,
          progress: null,
          updatedAt: now,
        })
        .where(and(eq(jobs.id, job.id), held))
        .returning({ id: jobs.id });
      if (released) outcome.released++;
    }
    if (outcome.released > 0) this.jobs.notifyWork();
    return outcome;
  }
}

/**
 * The held job's payload with what onboarding found: its recipe, and for a crunch without a
 * layout (compress) the recipe's cluster columns, which a manual crunch of an onboarded table sorts by.
 */
function withRecipe(job: Job, table: LakeTable): Record<string, unknown> {
  const recipe = table.recipe ?? null;
  // Kinds whose payload has no recipe (vacuum) keep their payload as it is.
  const payload: Record<string, unknown> =
    "recipe" in job.payload ? { ...job.payload, recipe } : { ...job.payload };
  if (job.kind === "crunch" && !payload.layout) payload.cluster_columns = recipe?.cluster_columns ?? [];
  return payload;
}
