/**
 * The scheduler's conversion step (`scheduler/scheduler.ts` runs it every tick): each active policy
 * version whose `next_run_at` has passed (the `prefix_policies_due_idx` index) queues its prefix's
 * conversion, and its removal of converted inputs where it has one, then moves `next_run_at` to
 * the next slot after the tick (`slots.ts`); all in one batch per policy. Jobs are keyed
 * `convert:<policy id>:<slot>` (and `remove_inputs:...`), and the move is conditional on the slot
 * read, so two ticks (or two control planes) queue a slot once. A prefix that is not active, or
 * whose location is archived, passes its slot without a job. At most `POLICIES_PER_TICK` a tick,
 * the longest due first; the rest are due at the next tick.
 */
import { and, asc, eq, lte } from "drizzle-orm";
import type { Db } from "../../db/index.ts";
import { locations, type PrefixAction, prefixes, prefixPolicies } from "../../db/schema.ts";
import type { BatchItem } from "../../jobs/kinds.ts";
import type { PolicyUpsert } from "../schemas.ts";
import type { PrefixRunService } from "./service.ts";
import { nextSlot } from "./slots.ts";

const POLICIES_PER_TICK = 100;

export class ConversionSchedule {
  constructor(
    private readonly db: Db,
    private readonly runs: PrefixRunService,
  ) {}

  /** Queues the due conversions and removals; returns how many jobs. */
  async tick(now: Date): Promise<number> {
    const due = await this.db
      .select({ policy: prefixPolicies, prefix: prefixes, locationStatus: locations.status })
      .from(prefixPolicies)
      .innerJoin(prefixes, eq(prefixes.id, prefixPolicies.prefixId))
      .leftJoin(locations, eq(locations.id, prefixes.locationId))
      .where(and(eq(prefixPolicies.active, true), lte(prefixPolicies.nextRunAt, now)))
      .orderBy(asc(prefixPolicies.nextRunAt))
      .limit(POLICIES_PER_TICK);
    let queued = 0;
    for (const { policy, prefix, locationStatus } of due) {
      const slot = policy.nextRunAt as Date;
      const body = policy.policy as PolicyUpsert;
      if (!body.convert) continue;
      const runnable = prefix.managementState === "active" && locationStatus !== "Archived";
      const steps: PrefixAction[] = [];
      if (runnable && body.convert.enabled) steps.push("convert");
      if (runnable && body.remove_inputs?.enabled) steps.push("remove_inputs");
      const statements: BatchItem[] = [];
      for (const action of steps)
        statements.push(
          ...(await this.runs.statements(prefix, policy, action, {
            trigger: "schedule",
            actor: null,
            dedupeKey: `${action}:${policy.id}:${slot.getTime()}`,
          })),
        );
      const [moved] = await this.db.batch([
        this.db
          .update(prefixPolicies)
          .set({ nextRunAt: nextSlot(body.convert, now) })
          .where(and(eq(prefixPolicies.id, policy.id), eq(prefixPolicies.nextRunAt, slot)))
          .returning({ id: prefixPolicies.id }),
        ...statements,
      ] as [BatchItem, ...BatchItem[]]);
      if ((moved as unknown[]).length > 0) queued += steps.length;
    }
    return queued;
  }
}
