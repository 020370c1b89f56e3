/**
 * Which pass a job runs. A crunch on a table another writer committed to within the mutation
 * interval runs as the lighter optimize pass (merge small files, no re-sort, no trials), and says
 * why: rewriting a busy table's recent files in full would race its writer for little gain.
 */
import type { CrunchKind, CrunchPayload } from "@lakesmith/shared/jobs";
import type { Clock } from "@lakesmith/shared/time";
import type { Table } from "../formats/index.ts";
import type { Pass } from "./metrics.ts";

export function choosePass(kind: CrunchKind, table: Table, payload: CrunchPayload, clock: Clock): Pass {
  const minutes = payload.mutation_interval_minutes;
  if (kind !== "crunch" || !minutes) return { kind };
  const last = table.lastForeignCommitAt();
  if (last === null) return { kind };
  const ago = (clock.now().getTime() - last) / 60_000;
  if (ago >= minutes) return { kind };
  return {
    kind: "optimize",
    reason: `another writer committed ${ago.toFixed(1)} minutes ago, within the mutation interval of ${minutes} minutes`,
  };
}
