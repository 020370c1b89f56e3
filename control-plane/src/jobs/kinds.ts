/**
 * Job kinds, each declared once. A declaration states everything the job engine needs to know about
 * a kind, and every step reads it: enqueue (payload, locations, endpoints, locks, attempts), offer
 * (only to agents allowed the locations and endpoints; never beside a job it excludes), complete,
 * cancel and reap (the finish hook). Declarations live beside their domain (`crunch/kind.ts`, ...);
 * `kinds/index.ts` lists the platform's own, and the registry refuses a kind declared twice.
 *
 * Exclusivity: kinds that share a `group` never hold agents at the same time on overlapping scopes.
 * A scope is a slash-terminated string (`table:<id>/`, `table:<id>/partition:<p>/`, `prefix:<key>`,
 * `connection:<id>/`) and two overlap when one starts with the other, so a table scope covers its
 * partitions. Scopes are compared among jobs of the same table, or among jobs of no table.
 */
import type { Clock } from "@lakesmith/shared";
import { locationKey } from "@lakesmith/shared/locations";
import type { SQL } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../db/index.ts";
import type { Job, LakeTable } from "../db/schema.ts";

/** How a job ended, as a finish hook sees it. */
export interface JobEnd {
  status: "succeeded" | "failed" | "cancelled";
  result: Record<string, unknown> | null;
  error: string | null;
}

export type BatchItem = Parameters<Db["batch"]>[0][number];

/** What finish hooks may use. */
export interface KindContext {
  db: Db;
  clock: Clock;
}

/**
 * Statements that run in the same batch as a job's end, after it, so what a job kind records
 * elsewhere (a table's onboarding status) moves together with the job. `ended` is a SQL condition
 * that holds only if the job really reached `end.status` in this batch; every statement must be
 * guarded by it. A hook is asked once per end the batch might produce, and running its statements
 * twice must change nothing.
 */
export type FinishHook = (ctx: KindContext, job: Job, end: JobEnd, ended: SQL) => BatchItem[];

/** What a kind does with one part of a job's output (protocol `part`). */
export interface PartHandling {
  /** Statements that apply the part, each guarded by `fresh`; they run in the batch that records it. */
  statements: BatchItem[];
  /** The answer to the agent, read after the batch; the same when the part is sent again. */
  reply?: () => Promise<Record<string, unknown>>;
}

/**
 * Applies a part of a running job's output (`jobs/parts.ts`). `fresh` is a SQL condition that holds
 * only while the part is the next one of the job's current lease; every statement must be guarded
 * by it, so a part sent again is not applied twice. A part the kind can't read is `{ invalid }`
 * (the agent is refused, the reason named).
 */
export type PartHook = (
  ctx: KindContext,
  job: Job,
  part: Record<string, unknown>,
  fresh: SQL,
) => Promise<PartHandling | { invalid: string }>;

/** The grains at which a kind's jobs exclude each other. */
export type ExclusionGrain = "table" | "partition_set" | "prefix" | "connection";

/** What a job of a kind may not run beside. */
export interface Exclusivity<P> {
  /** Kinds sharing a group exclude each other; the group names them in messages. */
  group: string;
  grain: ExclusionGrain;
  /** The scopes a job holds; none means this job takes no part (a validate that writes nothing). */
  scopes(payload: P, target: { tableId: string | null }): string[];
}

/** Where a job of a kind runs: what the agent must be allowed to use. */
export interface JobNeeds {
  /** Storage URIs the job touches (any form `locationKey` reads). */
  locations: string[];
  /** Catalog or metastore URLs the job talks to (any form `endpointKey` reads). */
  endpoints?: string[];
  /** Capabilities besides the kind (for example a scheme the agent must have a store for). */
  capabilities?: string[];
}

/** A precondition's verdict: nothing, or why the job can't be queued (409 or 422 with the field). */
export type Refusal = { status: 409; message: string } | { status: 422; field: string; message: string };

export interface JobKind<P = Record<string, unknown>> {
  kind: string;
  /** What one job of the kind is called in messages ("crunch", "vacuum"). */
  label: string;
  payload: z.ZodType<P>;
  needs(payload: P): JobNeeds;
  exclusive?: Exclusivity<P>;
  /** Checked before a job of the kind is queued for a table; the table's own state decides. */
  precondition?(table: LakeTable): Refusal | undefined;
  finish?: FinishHook;
  /** Kinds whose output is too large for one result take it in parts while they run. */
  part?: PartHook;
  /**
   * Payload fields that hold credentials, as dotted paths (`connection.client_secret`): the agent
   * gets them in its offer, no job view ever shows them, and the batch that ends the job removes
   * them from the stored payload (`jobs/secrets.ts`), whatever the end.
   */
  secrets?: readonly string[];
  retry: { maxAttempts: number };
}

/**
 * Keeps a declaration's payload type for its callbacks.
 *
 * @example export const vacuumKind = defineJobKind({ kind: "vacuum", label: "vacuum", payload: VacuumPayloadSchema, ... });
 */
export function defineJobKind<P>(kind: JobKind<P>): JobKind<P> {
  return kind;
}

/** The scope of a whole table. */
export const tableScope = (tableId: string) => `table:${tableId}/`;
/** The scope of one partition of a table (`col=value/...`). */
export const partitionScope = (tableId: string, partition: string) =>
  `table:${tableId}/partition:${partition}/`;
/** The scope of a storage prefix: its location key. */
export const prefixScope = (uri: string) => `prefix:${locationKey(uri)}`;
/** The scope of a catalog connection. */
export const connectionScope = (connectionId: string) => `connection:${connectionId}/`;

/** The declarations the control plane runs with; one per kind. */
export class JobKindRegistry {
  private readonly kinds = new Map<string, JobKind<unknown>>();

  /** Throws when two declarations name the same kind: the second would silently replace the first. */
  constructor(kinds: readonly JobKind<unknown>[]) {
    for (const kind of kinds) {
      if (this.kinds.has(kind.kind))
        throw new Error(
          `job kind '${kind.kind}' is declared twice; declare each kind once (jobs/kinds.ts) and list it once`,
        );
      this.kinds.set(kind.kind, kind);
    }
  }

  get(kind: string): JobKind | undefined {
    return this.kinds.get(kind) as JobKind | undefined;
  }

  /** The declaration of `kind`; an undeclared kind is a programming error. */
  of(kind: string): JobKind {
    const declared = this.get(kind);
    if (!declared)
      throw new Error(`job kind '${kind}' is not declared; add its declaration to kinds/index.ts`);
    return declared;
  }
}
