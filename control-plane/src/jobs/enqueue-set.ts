/**
 * Queues a set of jobs of one exclusivity group on one table all or none (a fanned-out crunch:
 * one job per partition), refusing the set while an active job of the group overlaps any of them.
 *
 * - The jobs of the set must not overlap each other (they would wait on each other forever).
 * - The race is closed as in `enqueueExclusive`: the inserts and a delete that withdraws the whole
 *   set again when a conflicting active job exists outside it run in one batch (one transaction;
 *   SQLite runs write transactions one after the other), so of two overlapping sets exactly one stays.
 * - Bounds: the set's ids and locks travel as two JSON values, so the statement binds the same few
 *   parameters whatever the set's size (D1 binds at most 100 per statement).
 */
import { newId } from "@lakesmith/shared";
import { and, eq, sql } from "drizzle-orm";
import { type Job, jobs } from "../db/schema.ts";
import type { Engine } from "./engine.ts";
import { type ActiveJob, insertStatement, type NewJob, routingOf } from "./enqueue.ts";
import { locksOverlap } from "./exclusion.ts";
import type { BatchItem } from "./kinds.ts";
import { ACTIVE_STATUSES } from "./state.ts";

/**
 * Queues every job of `inputs`, or none: `{ jobs }` in order, or the active job that overlaps one of
 * them (undefined when it ended again before it could be named).
 */
export async function enqueueExclusiveSet(
  engine: Engine,
  inputs: readonly NewJob[],
): Promise<{ jobs: Job[] } | { active: ActiveJob | undefined }> {
  const routings = inputs.map((input) => routingOf(engine, input));
  const first = routings[0];
  const tableId = inputs[0]?.tableId ?? null;
  if (!first) return { jobs: [] };
  if (first.exclusion === null)
    throw new Error("a job set needs jobs of an exclusivity group; queue others one by one");
  if (routings.some((r, i) => r.exclusion !== first.exclusion || (inputs[i]?.tableId ?? null) !== tableId))
    throw new Error("every job of a set must be of one exclusivity group and one table");
  const locks = JSON.stringify(routings.flatMap((r) => r.locks));
  const ids = inputs.map(() => newId("job"));
  const outside = JSON.stringify(ids);
  const active = () =>
    engine.db
      .select({ id: jobs.id, status: jobs.status, kind: jobs.kind })
      .from(jobs)
      .where(
        and(
          eq(jobs.exclusion, first.exclusion ?? ""),
          sql`${jobs.status} in ${ACTIVE_STATUSES}`,
          tableId === null ? sql`${jobs.tableId} is null` : eq(jobs.tableId, tableId),
          sql`${jobs.id} not in (select value from json_each(${outside}))`,
          locksOverlap(sql`${jobs.locks}`, locks),
        ),
      )
      .limit(1);
  const [before] = await active();
  if (before) return { active: before };
  const withdraw = engine.db
    .delete(jobs)
    .where(
      and(
        sql`${jobs.id} in (select value from json_each(${outside}))`,
        sql`exists (select 1 from ${jobs} as other
          where other.exclusion = ${first.exclusion} and other.status in ${ACTIVE_STATUSES}
            and other.table_id is ${tableId}
            and other.id not in (select value from json_each(${outside}))
            and ${locksOverlap(sql`other.locks`, locks)})`,
      ),
    )
    .returning({ id: jobs.id });
  const inserts: BatchItem[] = inputs.map((input, i) =>
    insertStatement(engine, input, ids[i], routings[i] ?? routingOf(engine, input)),
  );
  // Each insert returns its row, or none when its dedupe key exists already; the withdraw comes last.
  const [head, ...rest] = inserts;
  if (!head) return { jobs: [] };
  const done = (await engine.db.batch([head, ...rest, withdraw])) as unknown as object[][];
  if ((done[done.length - 1] ?? []).length > 0) return { active: (await active())[0] };
  engine.notifyWork();
  return { jobs: done.slice(0, -1).flat() as Job[] };
}
