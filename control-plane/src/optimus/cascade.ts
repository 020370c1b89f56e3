/**
 * What a submission's delete takes with it: every table keyed by the submission, deleted in the one
 * batch that deletes the submission: its runs, their workloads, its recommendations and its per-day
 * figures. A later table of Optimus joins the cascade by adding its delete here.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { optimusRecommendations, optimusRuns, optimusTableDays, optimusWorkloads } from "../db/schema.ts";
import type { BatchItem } from "../jobs/kinds.ts";

/** The deletes of a submission's dependent rows, run before the submission's own. */
export function cascadeDeletes(db: Db, submissionId: string): BatchItem[] {
  return [
    db.delete(optimusWorkloads).where(eq(optimusWorkloads.submissionId, submissionId)),
    db.delete(optimusRecommendations).where(eq(optimusRecommendations.submissionId, submissionId)),
    db.delete(optimusTableDays).where(eq(optimusTableDays.submissionId, submissionId)),
    db.delete(optimusRuns).where(eq(optimusRuns.submissionId, submissionId)),
  ];
}
