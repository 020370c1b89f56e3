/**
 * The overlap test of exclusivity groups (`kinds.ts`), as SQL, so it runs inside the statement that
 * needs it: the offer's own UPDATE (two agents offered two overlapping jobs at once can't both get
 * one: SQLite runs one write at a time, and the second sees the first's `offered`) and the enqueue
 * batch that withdraws a job that lost a race.
 *
 * - Two jobs conflict when they are in the same group, of the same table (or both of none), and a
 *   scope of one starts with a scope of the other.
 * - Bounds: the `(exclusion, status, table_id)` index finds the other jobs of the group in the
 *   given statuses on the table directly; their scopes are a handful each.
 */
import { type SQL, sql } from "drizzle-orm";
import { type JobStatus, jobs } from "../db/schema.ts";

/** The job whose conflicts are asked for: its own values, or columns of an outer query. */
export interface ExclusionOf {
  id: SQL | string;
  exclusion: SQL | string;
  tableId: SQL | string | null;
  locks: SQL | string;
}

/** Holds when a scope of one JSON list of scopes starts with a scope of the other. */
export function locksOverlap(these: SQL | string, those: SQL | string): SQL {
  return sql`exists (select 1 from json_each(${these}) a, json_each(${those}) b
    where substr(a.value, 1, length(b.value)) = b.value or substr(b.value, 1, length(a.value)) = a.value)`;
}

/** Holds when another job in `statuses` conflicts with `job`. */
export function conflicting(job: ExclusionOf, statuses: readonly JobStatus[]): SQL {
  return sql`exists (select 1 from ${jobs} as other
    where other.exclusion = ${job.exclusion} and other.status in ${statuses}
      and other.table_id is ${job.tableId} and other.id != ${job.id}
      and ${locksOverlap(sql`other.locks`, job.locks)})`;
}
