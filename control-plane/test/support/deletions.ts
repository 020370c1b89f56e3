/**
 * Helpers for the vacuum, partition expiration and pending deletion suites: an agent that runs the
 * deleting kinds, leasing and completing jobs through the job service as an agent would, and
 * results built from the shared schemas (so a drift in the contract fails to compile here).
 */
import {
  type ExpiredFile,
  type HardDeletePayload,
  HardDeletePayloadSchema,
  type HardDeleteResult,
  type PartitionExpirationResult,
  type RecoverPayload,
  RecoverPayloadSchema,
  type RecoverResult,
  type VacuumFile,
  type VacuumResult,
} from "@lakesmith/shared/maintenance";
import { expect } from "vitest";
import type { Job } from "../../src/db/schema.ts";
import { ADMIN_KEY, type TestPlane } from "../harness.ts";

export const AGENT = {
  id: "agt_deletions_for_tests",
  kinds: ["onboarding", "crunch", "vacuum", "partition_expiration", "recover", "hard_delete"],
  capabilities: ["s3", "gs", "file"],
  /** Allowed everything the suites' tables use (location keys, as offers compare them). */
  allow: ["s3://lake/", "s3://other/", "gs://other-lake/", "file:///"],
  endpoints: [] as string[],
};

const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

/** Offers queued jobs to the agent until it gets `jobId`, hands the others back, and leases it. */
export async function lease(plane: TestPlane, jobId: string): Promise<Job> {
  const { jobs } = plane.services;
  const others: Job[] = [];
  let job: Job | undefined;
  for (;;) {
    job = await jobs.offerNext(AGENT);
    if (!job || job.id === jobId) break;
    others.push(job);
  }
  for (const other of others) await jobs.reject(AGENT.id, other.id, other.fence);
  if (!job) throw new Error(`job ${jobId} was not offered`);
  const acked = await jobs.ack(AGENT.id, job.id, job.fence);
  if (acked.kind !== "done") throw new Error(`ack refused: ${acked.kind}`);
  return acked.job;
}

/** Leases the job (unless it is leased already) and reports success with `result`. */
export async function succeed(plane: TestPlane, jobOrId: string | Job, result: object): Promise<Job> {
  const job = typeof jobOrId === "string" ? await lease(plane, jobOrId) : jobOrId;
  const done = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "succeeded", {
    result: result as Record<string, unknown>,
  });
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  return done.job;
}

/** Leases the job and reports a failure that is not retried. */
export async function fail(plane: TestPlane, jobId: string, error: string): Promise<Job> {
  const job = await lease(plane, jobId);
  const done = await plane.services.jobs.complete(AGENT.id, job.id, job.fence, "failed", {
    error,
    retryable: false,
  });
  if (done.kind !== "done") throw new Error(`complete refused: ${JSON.stringify(done)}`);
  return done.job;
}

export const tombstone = (path: string, size = 1000): VacuumFile => ({
  path,
  size,
  reason: "tombstone",
  removed_at: Date.parse("2025-12-01T00:00:00Z"),
});

export const orphan = (path: string, size = 10): VacuumFile => ({
  path,
  size,
  reason: "orphan",
  modified_at: Date.parse("2025-11-01T00:00:00Z"),
});

export function vacuumResult(files: VacuumFile[], extra: Partial<VacuumResult> = {}): VacuumResult {
  return {
    mode: "lite",
    dry_run: false,
    table_version: 12,
    retention_hours: 168,
    table_retention_hours: 168,
    retention_shortened: false,
    orphan_min_age_hours: 72,
    files,
    files_count: files.length,
    bytes: files.reduce((sum, f) => sum + f.size, 0),
    kept: { tombstones_within_retention: 3 },
    objects_listed: files.length + 10,
    duration_ms: 420,
    ...extra,
  };
}

/** An expired file of partition `event_date=<date>`, as the agent reports it for a recover. */
export function expiredFile(date: string, n = 0, size = 5000): ExpiredFile {
  return {
    path: `event_date=${date}/part-${n}.parquet`,
    size,
    partition_values: { event_date: date, region: "eu" },
    modification_time: Date.parse(`${date}T03:00:00Z`),
    stats: JSON.stringify({ numRecords: 100 }),
    tags: null,
  };
}

export function expirationResult(
  files: ExpiredFile[],
  extra: Partial<PartitionExpirationResult> = {},
): PartitionExpirationResult {
  const dates = [...new Set(files.map((f) => f.partition_values.event_date as string))].sort();
  return {
    dry_run: false,
    validate: false,
    can_run: true,
    reason: null,
    table_version: 40,
    partition_column: "event_date",
    retention_days: 30,
    cutoff_date: "2026-01-01",
    partitions: dates.map((d) => ({
      partition: `event_date=${d}`,
      value: d,
      files: files.filter((f) => f.partition_values.event_date === d).length,
      bytes: files.filter((f) => f.partition_values.event_date === d).reduce((s, f) => s + f.size, 0),
      rows: 100,
    })),
    files,
    files_count: files.length,
    bytes: files.reduce((sum, f) => sum + f.size, 0),
    committed_version: 41,
    committed_at: Date.parse("2026-01-31T12:00:00Z"),
    table_retention_hours: 168,
    duration_ms: 900,
    ...extra,
  };
}

export async function hardDeletePayloadOf(plane: TestPlane, jobId: string): Promise<HardDeletePayload> {
  const job = await plane.services.jobs.get(jobId);
  expect(job?.kind).toBe("hard_delete");
  return HardDeletePayloadSchema.parse(job?.payload);
}

export async function recoverPayloadOf(plane: TestPlane, jobId: string): Promise<RecoverPayload> {
  const job = await plane.services.jobs.get(jobId);
  expect(job?.kind).toBe("recover");
  return RecoverPayloadSchema.parse(job?.payload);
}

/** The agent's answer to a hard-delete payload; `outcomes` by path, `deleted` otherwise. */
export function hardDeleteResult(
  payload: HardDeletePayload,
  outcomes: Record<string, { outcome: HardDeleteResult["files"][number]["outcome"]; detail?: string }> = {},
  only?: (path: string) => boolean,
): HardDeleteResult {
  const files = payload.files
    .filter((f) => !only || only(f.path))
    .map((f) => ({
      deletion_id: f.deletion_id,
      path: f.path,
      outcome: outcomes[f.path]?.outcome ?? ("deleted" as const),
      detail: outcomes[f.path]?.detail ?? null,
    }));
  return {
    table_version: 50,
    files,
    deleted: files.filter((f) => f.outcome === "deleted" || f.outcome === "absent").length,
    retained: files.filter((f) => f.outcome === "retained").length,
    failed: files.filter((f) => f.outcome === "failed").length,
    duration_ms: 77,
  };
}

export function recoverResult(
  payload: RecoverPayload,
  outcome: "restored" | "already_live" = "restored",
): RecoverResult {
  return {
    committed_version: outcome === "restored" ? 42 : null,
    files: payload.files.map((f) => ({ deletion_id: f.deletion_id, path: f.path, outcome })),
    duration_ms: 55,
  };
}

export const daysMs = (n: number) => n * DAY_MS;

/** A record as the API shows it. */
export interface RecordWire {
  id: string;
  table_id: string;
  source_job_id: string;
  action_type: string;
  vacuum_mode: string | null;
  reason: string;
  path: string;
  size_bytes: number;
  partition: string | null;
  status: string;
  eligible_at: string;
  recoverable: boolean;
  created_at: string;
  updated_at: string;
  recovered_at: string | null;
  recover_reason: string | null;
  recovered_by: string | null;
  recover_job_id: string | null;
  hard_delete_job_id: string | null;
  deleted_at: string | null;
  note: string | null;
}

async function post(plane: TestPlane, path: string, body: unknown): Promise<{ id: string }> {
  const res = await plane.call("POST", path, { token: ADMIN_KEY, body });
  if (res.status !== 202) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/** Every record of a source job, through the API. */
export async function recordsOf(plane: TestPlane, sourceJobId: string): Promise<RecordWire[]> {
  const all: RecordWire[] = [];
  for (let offset = 0; ; offset += 100) {
    const res = await plane.call(
      "GET",
      `/api/v1/pending-deletions?source_job_id=${sourceJobId}&limit=100&offset=${offset}`,
      {
        token: ADMIN_KEY,
      },
    );
    const page = (await res.json()) as { items: RecordWire[] };
    all.push(...page.items);
    if (page.items.length < 100) return all;
  }
}

/** Triggers a vacuum through the API and completes it with the files; returns the job id and its records. */
export async function vacuumed(
  plane: TestPlane,
  tableId: string,
  files: VacuumFile[],
  options: { trigger?: Record<string, unknown>; result?: Partial<VacuumResult> } = {},
) {
  const { id } = await post(plane, `/api/v1/tables/${tableId}/vacuum`, options.trigger ?? {});
  await succeed(plane, id, vacuumResult(files, options.result));
  return { jobId: id, records: await recordsOf(plane, id) };
}

/** Triggers a partition expiration through the API and completes it with the files. */
export async function expired(
  plane: TestPlane,
  tableId: string,
  files: ExpiredFile[],
  options: { trigger?: Record<string, unknown>; result?: Partial<PartitionExpirationResult> } = {},
) {
  const { id } = await post(plane, `/api/v1/tables/${tableId}/partition-expiration`, options.trigger ?? {});
  await succeed(plane, id, expirationResult(files, options.result));
  return { jobId: id, records: await recordsOf(plane, id) };
}
