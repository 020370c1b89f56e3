/**
 * What a managed table's effective policy asks of it, value by value, and which runs are due.
 * Pure: the engine (`engine.ts`) and the managed-table view read the same answers.
 *
 * - Each named action gets its schedule (its own, the policy's, or the default) and its parameters,
 *   each with where it came from: `policy`, `configuration` (a setting) or `table` (the table's own
 *   value, for example its retention when the policy names none).
 * - An action the table can't take is listed as skipped with the reason (`actions.ts`).
 * - Due runs: the actions whose latest occurrence falls in [since, now]. Rewrite actions due at the
 *   same occurrence make one job: `crunch` when compress or improve_layout is among them (with the
 *   layout), else `optimize`.
 */
import type { CrunchKind } from "@lakesmith/shared/jobs";
import { type Action, type ActionFacts, REWRITE_ACTIONS, unsupportedReason } from "./actions.ts";
import type { Layout, PolicyBody, Schedule } from "./schemas.ts";
import { latestOccurrence, nextOccurrence, scheduleOf } from "./timing.ts";

export type Source = "policy" | "configuration" | "table" | "default";

export interface EffectiveAction {
  action: Action;
  schedule: Schedule;
  schedule_source: "action" | "policy" | "default";
  /** Parameter values, each with its source. */
  parameters: Record<string, { value: unknown; source: Source }>;
  /** Why the table skips the action; absent when it runs it. */
  skipped?: string;
}

export interface PlanSettings {
  default_partition_expiration_days: number;
}

/** The policy's actions as they apply to a table with `facts`. */
export function effectiveActions(
  body: PolicyBody,
  facts: ActionFacts,
  settings: PlanSettings,
): EffectiveAction[] {
  return (Object.keys(body.actions) as Action[]).map((action) => {
    const own = body.actions[action] as { schedule?: Schedule } & Record<string, unknown>;
    const parameters: EffectiveAction["parameters"] = {};
    const fromPolicy = (name: string, value: unknown) => {
      parameters[name] = { value, source: "policy" };
    };
    if (REWRITE_ACTIONS.includes(action)) {
      parameters.target_file_size_mb =
        body.target_file_size_mb !== undefined
          ? { value: body.target_file_size_mb, source: "policy" }
          : { value: null, source: "table" };
      fromPolicy("lookback_days", body.lookback_days);
    }
    if (action === "improve_layout") fromPolicy("layout", own.layout);
    if (action === "expire_snapshots") {
      parameters.retention_hours =
        own.retention_hours !== undefined
          ? { value: own.retention_hours, source: "policy" }
          : { value: null, source: "table" };
      fromPolicy("shorten_retention", own.shorten_retention ?? false);
    }
    if (action === "expire_partitions")
      parameters.retention_days =
        own.retention_days !== undefined
          ? { value: own.retention_days, source: "policy" }
          : { value: settings.default_partition_expiration_days, source: "configuration" };
    const skipped = unsupportedReason(action, facts);
    return {
      action,
      schedule: scheduleOf(own.schedule, body.schedule),
      schedule_source: own.schedule ? "action" : body.schedule ? "policy" : "default",
      parameters,
      ...(skipped ? { skipped } : {}),
    };
  });
}

/** One run a due occurrence asks for. */
export type DueRun =
  | {
      group: "rewrite";
      kind: CrunchKind;
      layout: Layout | undefined;
      /** The policy's target file size; undefined: the table's own. */
      targetFileSizeMb: number | undefined;
      lookbackDays: number;
      at: Date;
      actions: Action[];
    }
  | { group: "expire_snapshots"; at: Date; retentionHours: number | undefined; shortenRetention: boolean }
  | { group: "expire_partitions"; at: Date; retentionDays: number };

/** The runs due in [since, now], and when the table is next due (null: never). */
export function dueRuns(
  actions: readonly EffectiveAction[],
  since: Date,
  now: Date,
): { runs: DueRun[]; next: Date | null } {
  const runnable = actions.filter((a) => !a.skipped);
  const due = runnable.filter((a) => {
    const at = latestOccurrence(a.schedule, now).getTime();
    return at >= since.getTime() && at <= now.getTime();
  });
  const runs: DueRun[] = [];
  const rewrites = new Map<number, EffectiveAction[]>();
  for (const a of due) {
    const at = latestOccurrence(a.schedule, now);
    if (REWRITE_ACTIONS.includes(a.action))
      rewrites.set(at.getTime(), [...(rewrites.get(at.getTime()) ?? []), a]);
    else if (a.action === "expire_snapshots")
      runs.push({
        group: "expire_snapshots",
        at,
        retentionHours: (a.parameters.retention_hours?.value as number | null) ?? undefined,
        shortenRetention: a.parameters.shorten_retention?.value === true,
      });
    else
      runs.push({
        group: "expire_partitions",
        at,
        retentionDays: a.parameters.retention_days?.value as number,
      });
  }
  for (const [at, group] of rewrites) {
    const layout = group.find((a) => a.action === "improve_layout")?.parameters.layout?.value as
      | Layout
      | undefined;
    const rewrites = group.some((a) => a.action === "compress" || a.action === "improve_layout");
    runs.push({
      group: "rewrite",
      kind: rewrites ? "crunch" : "optimize",
      layout,
      targetFileSizeMb: (group[0]?.parameters.target_file_size_mb?.value as number | null) ?? undefined,
      lookbackDays: (group[0]?.parameters.lookback_days?.value as number | undefined) ?? 7,
      at: new Date(at),
      actions: group.map((a) => a.action),
    });
  }
  const nexts = runnable.map((a) => nextOccurrence(a.schedule, now).getTime());
  return { runs, next: nexts.length ? new Date(Math.min(...nexts)) : null };
}
