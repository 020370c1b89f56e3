/**
 * Parts of a running job's output (protocol `part`), for kinds whose output is too large for one
 * result (a catalog sync's tables): each part is applied as it arrives, by the kind's `part` hook.
 *
 * - Only the lease's owner may send parts, on its current fence, while the job runs or is being
 *   cancelled (like progress); anything else is `refused`, and the agent stops.
 * - Parts of one lease are numbered from 1. Part n is applied only when the row says n - 1 was the
 *   last one of this fence (`part_fence`, `part_seq`), in one batch that applies it and records
 *   it, so a part is applied once, in order, whatever a redelivery or a race does. A part already
 *   applied is answered again (its reply re-read) and not applied; a gap is refused.
 * - A part extends the lease, as progress does.
 */

import type { Part } from "@lakesmith/shared/protocol";
import { and, type SQL, sql } from "drizzle-orm";
import { jobs } from "../db/schema.ts";
import { type Engine, getJob, owned, whyRefused } from "./engine.ts";
import type { BatchItem } from "./kinds.ts";
import { from } from "./state.ts";

export type PartOutcome =
  | { kind: "applied"; reply: Record<string, unknown> | undefined; cancelling: boolean }
  | { kind: "refused"; reason: string };

/** A part as the agent sent it. */
export type PartMessage = Pick<Part, "job_id" | "fence" | "seq" | "part">;

export async function applyPart(engine: Engine, agentId: string, message: PartMessage): Promise<PartOutcome> {
  const { job_id: jobId, fence, seq, part } = message;
  const job = await getJob(engine, jobId);
  const mine = owned(jobId, agentId, fence, from("extend"));
  if (!job || job.fence !== fence || job.leaseOwner !== agentId || !from("extend").includes(job.status))
    return { kind: "refused", reason: await whyRefused(engine, jobId, agentId, fence) };
  const hook = engine.kinds.get(job.kind)?.part;
  if (!hook) return { kind: "refused", reason: `jobs of kind '${job.kind}' take no parts` };
  const applied = job.partFence === fence ? (job.partSeq ?? 0) : 0;
  if (seq > applied + 1) return { kind: "refused", reason: `part ${seq} came before part ${applied + 1}` };

  const fresh = sql`exists (select 1 from ${jobs} where ${and(mine, nextPart(fence, seq))})`;
  const handling = await hook({ db: engine.db, clock: engine.clock }, job, part, fresh);
  if ("invalid" in handling) return { kind: "refused", reason: `part ${seq}: ${handling.invalid}` };
  const now = engine.clock.now();
  const record = engine.db
    .update(jobs)
    .set({
      partFence: fence,
      partSeq: sql`max(coalesce(case when ${jobs.partFence} = ${fence} then ${jobs.partSeq} end, 0), ${seq})`,
      leaseExpiresAt: new Date(now.getTime() + engine.timings.leaseMs),
      updatedAt: now,
    })
    .where(mine)
    .returning({ status: jobs.status });
  const statements = seq > applied ? handling.statements : [];
  const results = await engine.db.batch([...statements, record] as unknown as [BatchItem, ...BatchItem[]]);
  const [recorded] = results[results.length - 1] as { status: string }[];
  if (!recorded) return { kind: "refused", reason: await whyRefused(engine, jobId, agentId, fence) };
  return { kind: "applied", reply: await handling.reply?.(), cancelling: recorded.status === "cancelling" };
}

/** Holds while part `seq` is the next one of `fence`. */
function nextPart(fence: number, seq: number): SQL {
  return sql`coalesce(case when ${jobs.partFence} = ${fence} then ${jobs.partSeq} end, 0) = ${seq - 1}`;
}
