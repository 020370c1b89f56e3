/**
 * What a submission's delete takes with it: every table keyed by the submission, deleted in the one
 * batch that deletes the submission. A later table of Optimus (recommendations, per-day data) joins
 * the cascade by adding its delete here.
 */
import { eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { optimusRuns } from "../db/schema.ts";
import type { BatchItem } from "../jobs/kinds.ts";

/** The deletes of a submission's dependent rows, run before the submission's own. */
export function cascadeDeletes(db: Db, submissionId: string): BatchItem[] {
  return [db.delete(optimusRuns).where(eq(optimusRuns.submissionId, submissionId))];
}
