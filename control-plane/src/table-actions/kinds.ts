/**
 * Which document-1 job each action runs as, and back: the action a job carried out, read from its
 * kind and payload (a crunch with a `layout` is `improve_layout`, without one `compress`), so an
 * action needs no record beside its job.
 */
import { PARTITION_EXPIRATION_KIND, VACUUM_KIND } from "@lakesmith/shared/maintenance";
import type { Job } from "../db/schema.ts";
import type { Action } from "../policies/actions.ts";

export const JOB_KIND_OF: Record<Action, string> = {
  compress: "crunch",
  compact: "optimize",
  improve_layout: "crunch",
  expire_snapshots: VACUUM_KIND,
  expire_partitions: PARTITION_EXPIRATION_KIND,
};

/** The kinds an action runs as (and a run of which can be run again here). */
export const ACTION_JOB_KINDS = [...new Set(Object.values(JOB_KIND_OF))];

/** The jobs' `trigger` of an action of this API. */
export const ACTION_TRIGGER = "action";

/** The action `job` carried out; undefined for kinds no action runs as. */
export function actionOf(job: Pick<Job, "kind" | "payload">): Action | undefined {
  switch (job.kind) {
    case "crunch":
      return job.payload.layout ? "improve_layout" : "compress";
    case "optimize":
      return "compact";
    case VACUUM_KIND:
      return "expire_snapshots";
    case PARTITION_EXPIRATION_KIND:
      return "expire_partitions";
    default:
      return undefined;
  }
}
