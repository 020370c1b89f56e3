/**
 * Credentials in job payloads (a catalog job carries its connection's secrets to the agent). A kind
 * names the payload fields that hold them (`JobKind.secrets`); then:
 *
 * - views never show them: `shownPayload` is the payload without them, for every job view;
 * - the batch that ends the job (succeeded, failed, cancelled; by the agent, a cancel, the reaper or
 *   the last refusal) removes them from the stored payload (`purgeStatement`, run after the kind's
 *   finish hook by `complete.ts`), guarded like a finish hook so only the real end purges. A job sent
 *   back to the queue for another attempt keeps them: the next agent needs them.
 */
import { and, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { type Job, jobs } from "../db/schema.ts";
import type { JobKind } from "./kinds.ts";

/** The payload as views show it: without the kind's secret fields. */
export function shownPayload(kind: JobKind | undefined, payload: Record<string, unknown>) {
  const paths = kind?.secrets ?? [];
  if (paths.length === 0) return payload;
  const shown = structuredClone(payload);
  for (const path of paths) {
    const keys = path.split(".");
    const last = keys.pop() as string;
    let node: unknown = shown;
    for (const key of keys) node = isObject(node) ? node[key] : undefined;
    if (isObject(node)) delete node[last];
  }
  return shown;
}

/** Removes the kind's secret fields from the job's stored payload, if `ended` holds. */
export function purgeStatement(db: Db, kind: JobKind | undefined, job: Job, ended: SQL) {
  const paths = kind?.secrets ?? [];
  if (paths.length === 0) return undefined;
  const jsonPaths = sql.join(
    paths.map((p) => sql`${`$.${p}`}`),
    sql`, `,
  );
  return db
    .update(jobs)
    .set({ payload: sql`json_remove(${jobs.payload}, ${jsonPaths})` as unknown as Record<string, unknown> })
    .where(and(eq(jobs.id, job.id), ended));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
