/**
 * Apply, dismiss and revert a recommendation (document 1, "Optimus"; dismiss and revert are
 * extensions). Every change of the table's policy goes through the policies service, so validation
 * and the re-resolution of managed tables happen as for any policy write.
 *
 * - Apply, in order: the recommendation is `open` (409 naming its status); its Lakesmith table is
 *   linked to a synced catalog table that a policy applies to (409 "not managed: ..." saying how to
 *   manage it); the table's format takes `improve_layout` (422 naming `layout`); its own policy, if
 *   any, is enabled (409: a disabled one is nobody's effective policy). Then `improve_layout:
 *   {layout}` is written into the table's own table-level policy, keeping that action's schedule.
 * - A table that only inherits a catalog or prefix policy gets its own, created. Resolution makes
 *   the most specific enabled policy the whole effective policy (`policies/resolve.ts`: no merge), so
 *   the new policy copies the inherited one's actions the table can take, its schedule, file size
 *   and lookback; without that the table would stop compressing or expiring. Only the name differs.
 *   The catalog or prefix policy itself is never changed.
 * - The status moves first (open -> applied, guarded), so two applies at once make one; a failed
 *   policy write moves it back. The record of what was replaced (`applied.ts`) follows the write.
 * - Revert (`applied` only): a created policy still at the version the apply left is deleted (the
 *   inherited policy applies again); otherwise the previous `improve_layout` is put back (or the
 *   action removed when there was none; a policy left with no action is deleted). When the policy no
 *   longer holds the applied layout (deleted, or its layout changed since), nothing is touched: a
 *   later change wins. Dismiss: `open` only.
 */
import type { Clock } from "@lakesmith/shared";
import { and, eq, isNull } from "drizzle-orm";
import { catalogId, tableId as catalogTableId } from "../catalogs/ids.ts";
import type { Db } from "../db/index.ts";
import {
  catalogTables,
  lakeTables,
  managedTables,
  type OptimusRecommendation,
  type OptimusRecommendationStatus,
  optimusRecommendations,
  type Policy,
  policies,
} from "../db/schema.ts";
import { ApiError, conflict, invalidField } from "../http/problem.ts";
import { syncedTableOf } from "../managed-tables/joins.ts";
import { ACTIONS, unsupportedReason } from "../policies/actions.ts";
import type { PolicyBody } from "../policies/schemas.ts";
import type { PolicyService } from "../policies/service.ts";
import type { TableActionService } from "../table-actions/service.ts";
import { type AppliedRecord, appliedRecord, sameLayout } from "./applied.ts";
import type { OptimusRecommendations } from "./recommendations.ts";

export interface Applied {
  recommendation: OptimusRecommendation;
  policy: { policyId: string; catalogId: string; tableId: string; created: boolean; version: number };
  runNow: { jobId: string | null; error: string | null } | null;
}

export interface Reverted {
  recommendation: OptimusRecommendation;
  policyChange: "deleted" | "restored" | "none";
  detail: string;
}

/** The catalog table a recommendation's Lakesmith table is managed through. */
interface ManagedTarget {
  catalogId: string;
  tableId: string;
  fullName: string;
  ownPolicy: Policy | undefined;
  effectivePolicy: Policy | undefined;
  canTake: (action: (typeof ACTIONS)[number]) => boolean;
}

export class RecommendationActions {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly recommendations: OptimusRecommendations,
    private readonly policies: PolicyService,
    private readonly tableActions: TableActionService,
  ) {}

  async apply(id: string, runNow: boolean, actor: string | null): Promise<Applied> {
    const rec = await this.recommendations.find(id);
    expectStatus(rec, "open", "applied");
    const target = await this.managedTarget(rec);
    if (target.ownPolicy && !target.ownPolicy.enabled)
      throw conflict(
        `Table '${rec.tableFqn}' has its own policy '${target.ownPolicy.id}', disabled: a layout written there would not run. Enable it (POST /api/v1/catalogs/${target.catalogId}/policies/${target.ownPolicy.id}:enable) or delete it, then apply.`,
      );
    const base = (target.ownPolicy ?? target.effectivePolicy)?.body as PolicyBody | undefined;
    const previous = base?.actions.improve_layout ?? null;
    const improve = { layout: rec.layout, ...(previous?.schedule ? { schedule: previous.schedule } : {}) };
    const body: PolicyBody = target.ownPolicy
      ? { ...(base as PolicyBody), actions: { ...(base as PolicyBody).actions, improve_layout: improve } }
      : inherited(base, target, improve, rec.id);

    await this.move(rec, "open", "applied", actor);
    let written: Awaited<ReturnType<PolicyService["put"]>>;
    try {
      written = await this.policies.put(
        target.catalogId,
        { scope: "table", tableId: target.tableId },
        body,
        actor,
      );
    } catch (err) {
      await this.move(rec, "applied", "open", rec.statusChangedBy, rec.statusChangedAt);
      throw err;
    }
    const record: AppliedRecord = {
      created: written.created,
      improve_layout: previous,
      policy_version: written.policy.version,
      applied_at: this.clock.now().getTime(),
      applied_by: actor,
    };
    await this.db
      .update(optimusRecommendations)
      .set({ appliedPolicyId: written.policy.policy_id, previousPolicy: record })
      .where(eq(optimusRecommendations.id, rec.id));
    return {
      recommendation: await this.recommendations.find(rec.id),
      policy: {
        policyId: written.policy.policy_id,
        catalogId: target.catalogId,
        tableId: target.tableId,
        created: written.created,
        version: written.policy.version,
      },
      runNow: runNow ? await this.queueNow(target, rec, actor) : null,
    };
  }

  async dismiss(id: string, actor: string | null): Promise<OptimusRecommendation> {
    const rec = await this.recommendations.find(id);
    expectStatus(rec, "open", "dismissed");
    await this.move(rec, "open", "dismissed", actor);
    return this.recommendations.find(id);
  }

  async revert(id: string, actor: string | null): Promise<Reverted> {
    const rec = await this.recommendations.find(id);
    expectStatus(rec, "applied", "reverted");
    const record = appliedRecord(rec);
    if (!record || !rec.appliedPolicyId)
      throw conflict(`Recommendation '${id}' is still being applied; try again in a moment.`);
    await this.move(rec, "applied", "reverted", actor);
    try {
      const outcome = await this.restore(rec, rec.appliedPolicyId, record);
      return { recommendation: await this.recommendations.find(id), ...outcome };
    } catch (err) {
      await this.move(rec, "reverted", "applied", rec.statusChangedBy, rec.statusChangedAt);
      throw err;
    }
  }

  private async restore(
    rec: OptimusRecommendation,
    policyId: string,
    record: AppliedRecord,
  ): Promise<Omit<Reverted, "recommendation">> {
    const [policy] = await this.db.select().from(policies).where(eq(policies.id, policyId));
    if (!policy)
      return {
        policyChange: "none",
        detail: `Policy '${policyId}' was deleted since the apply; the layout is in no policy.`,
      };
    const body = policy.body as PolicyBody;
    const catalog = catalogId({ connectionId: policy.connectionId, catalog: policy.catalog });
    if (!sameLayout(body.actions.improve_layout?.layout, rec.layout))
      return {
        policyChange: "none",
        detail: `Policy '${policyId}' no longer holds the applied layout (changed since); it was left as it is.`,
      };
    if (record.created && policy.version === record.policy_version) {
      await this.policies.delete(catalog, policyId);
      return {
        policyChange: "deleted",
        detail: `Policy '${policyId}', created by the apply and unchanged since, was deleted; the table's inherited policy applies again.`,
      };
    }
    const { improve_layout: _applied, ...others } = body.actions;
    const actions = record.improve_layout ? { ...others, improve_layout: record.improve_layout } : others;
    if (Object.keys(actions).length === 0) {
      await this.policies.delete(catalog, policyId);
      return {
        policyChange: "deleted",
        detail: `Policy '${policyId}' named no other action, so it was deleted.`,
      };
    }
    await this.policies.replace(catalog, policyId, { ...body, actions } as PolicyBody);
    return {
      policyChange: "restored",
      detail: record.improve_layout
        ? `Policy '${policyId}' has its previous improve_layout again.`
        : `Policy '${policyId}' no longer names improve_layout; its other actions stay.`,
    };
  }

  /** The catalog table and policies of the recommendation's table; 409 unless managed, 422 unless it takes a layout. */
  private async managedTarget(rec: OptimusRecommendation): Promise<ManagedTarget> {
    const [lake] = await this.db
      .select({ connectionId: lakeTables.catalogConnectionId, fullName: lakeTables.catalogFullName })
      .from(lakeTables)
      .where(eq(lakeTables.id, rec.tableId));
    if (!lake)
      throw conflict(
        `Table '${rec.tableFqn}' is not managed: its Lakesmith table '${rec.tableId}' no longer exists.`,
      );
    if (!lake.connectionId || !lake.fullName)
      throw conflict(
        `Table '${rec.tableFqn}' is not managed: it was registered by its URI, and policies apply to catalog tables. Register it through a catalog connection (POST /api/v1/tables with catalog_connection_id and catalog_table), give it a policy, then apply.`,
      );
    const [row] = await this.db
      .select({ synced: catalogTables, managed: managedTables })
      .from(catalogTables)
      .leftJoin(managedTables, syncedTableOf)
      .where(
        and(
          eq(catalogTables.connectionId, lake.connectionId),
          eq(catalogTables.fullName, lake.fullName),
          isNull(catalogTables.deletedAt),
        ),
      );
    if (!row)
      throw conflict(
        `Table '${rec.tableFqn}' is not managed: its catalog no longer reports '${lake.fullName}'. Sync its catalog connection (POST /api/v1/catalog-connections/${lake.connectionId}/sync), then apply.`,
      );
    const ref = { connectionId: lake.connectionId, catalog: row.synced.catalog };
    const ids = { catalogId: catalogId(ref), tableId: catalogTableId(ref, lake.fullName) };
    if (!row.managed)
      throw conflict(
        `Table '${rec.tableFqn}' is not managed: no policy applies to it. Give it one (POST /api/v1/catalogs/${ids.catalogId}/tables/${encodeURIComponent(ids.tableId)}/policies, or a catalog or prefix policy that covers it), then apply.`,
      );
    const facts = await this.policies.factsOf(row.synced);
    const why = unsupportedReason("improve_layout", facts);
    if (why) throw invalidField("layout", `table '${rec.tableFqn}' can't take improve_layout: ${why}`);
    const own = await this.policies.ofScope(ref, "table", lake.fullName);
    const [effective] = row.managed.policyId
      ? await this.db.select().from(policies).where(eq(policies.id, row.managed.policyId))
      : [];
    return {
      ...ids,
      fullName: lake.fullName,
      ownPolicy: own,
      effectivePolicy: effective,
      canTake: (action) => unsupportedReason(action, facts) === undefined,
    };
  }

  private async queueNow(target: ManagedTarget, rec: OptimusRecommendation, actor: string | null) {
    try {
      const job = await this.tableActions.trigger(
        target.catalogId,
        target.tableId,
        { action: "improve_layout", layout: rec.layout },
        actor,
      );
      return { jobId: job.id, error: null };
    } catch (err) {
      // The apply stands; say why nothing was queued (an overlapping job, a failed onboarding).
      if (!(err instanceof ApiError)) throw err;
      return { jobId: null, error: err.message };
    }
  }

  /** Moves the status `from` -> `to`, guarded; 409 naming the status when another request moved it first. */
  private async move(
    rec: OptimusRecommendation,
    from: OptimusRecommendationStatus,
    to: OptimusRecommendationStatus,
    by: string | null,
    at: Date | null = this.clock.now(),
  ): Promise<void> {
    const moved = await this.db
      .update(optimusRecommendations)
      .set({ status: to, statusChangedAt: at, statusChangedBy: by })
      .where(and(eq(optimusRecommendations.id, rec.id), eq(optimusRecommendations.status, from)))
      .returning({ id: optimusRecommendations.id });
    if (moved.length === 0) {
      const now = await this.recommendations.find(rec.id);
      throw conflict(`Recommendation '${rec.id}' is ${now.status} now; it can't become ${to}.`);
    }
  }
}

/** 409 naming the status unless the recommendation is `from`. */
function expectStatus(rec: OptimusRecommendation, from: OptimusRecommendationStatus, to: string): void {
  if (rec.status !== from)
    throw conflict(
      `Recommendation '${rec.id}' is ${rec.status}; only an ${from} recommendation can be ${to}.`,
    );
}

/**
 * The body of a table policy created for a table that inherits `base` (null: only disabled
 * policies apply): the inherited actions it can take, its settings, and the layout.
 */
function inherited(
  base: PolicyBody | undefined,
  target: ManagedTarget,
  improve: NonNullable<PolicyBody["actions"]["improve_layout"]>,
  recId: string,
): PolicyBody {
  const actions: Record<string, unknown> = {};
  for (const action of ACTIONS)
    if (base?.actions[action] && target.canTake(action)) actions[action] = base.actions[action];
  actions.improve_layout = improve;
  return {
    ...(base ?? { enabled: true, lookback_days: 7 }),
    enabled: true,
    name: `Optimus recommendation ${recId}`,
    actions: actions as PolicyBody["actions"],
  };
}
