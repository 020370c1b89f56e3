/**
 * The API's views of a crunch job, read from the job row: the payload says what was asked (range,
 * cluster columns), the agent's `CrunchResult` says what happened. Payloads of scheduled runs
 * (`ScheduledJobPayload`) parse as crunch payloads too, so both kinds of run read the same way.
 */
import {
  type CrunchKind,
  type CrunchPayload,
  CrunchPayloadSchema,
  type CrunchResult,
  CrunchResultSchema,
  crunchPartitionLabel,
} from "@lakesmith/shared/jobs";
import type { Job } from "../db/schema.ts";
import { TERMINAL_STATUSES } from "../jobs/service.ts";
import { resultNote, tableJobFields } from "../jobs/view.ts";
import type { CrunchJobWire, CrunchMetricsWire } from "./schemas.ts";

const asKind = (kind: string): CrunchKind => (kind === "optimize" ? "optimize" : "crunch");

function payloadOf(job: Job): CrunchPayload | undefined {
  const parsed = CrunchPayloadSchema.safeParse(job.payload);
  return parsed.success ? parsed.data : undefined;
}

function resultOf(job: Job) {
  const parsed = job.result ? CrunchResultSchema.safeParse(job.result) : undefined;
  return { result: parsed?.success ? parsed.data : undefined, problem: parsed?.error };
}

export function crunchJobView(job: Job): CrunchJobWire {
  const payload = payloadOf(job);
  const { result } = resultOf(job);
  return {
    ...tableJobFields(job),
    job_type: result?.job_type ?? asKind(job.kind),
    requested_job_type: asKind(job.kind),
    date_range: payload?.date_range ?? null,
    backfill_col: payload?.backfill_col ?? null,
    partition: payload?.partition ? crunchPartitionLabel(payload.partition) : null,
    cluster_columns: payload?.cluster_columns ?? payload?.recipe?.cluster_columns ?? [],
    layout: payload?.layout ?? null,
    target_file_size_mb: payload?.target_file_size_mb ?? null,
    summary: result
      ? {
          drr: result.drr,
          bytes_before: result.bytes_before,
          bytes_after: result.bytes_after,
          files_before: result.files_before,
          files_after: result.files_after,
          committed_version: result.committed_version,
        }
      : null,
  };
}

/** The job with its metrics: null (with a note saying why) until the agent reports a result. */
export function crunchMetricsView(job: Job): CrunchMetricsWire {
  const { result, problem } = resultOf(job);
  return {
    job: crunchJobView(job),
    progress: TERMINAL_STATUSES.includes(job.status) ? null : job.progress,
    metrics: result ? metricsOf(result) : null,
    metrics_note: result ? null : resultNote(job, problem, "crunch", "metrics come"),
  };
}

function metricsOf(r: CrunchResult): NonNullable<CrunchMetricsWire["metrics"]> {
  return {
    job_type: r.job_type,
    job_type_reason: r.job_type_reason ?? null,
    notes: r.notes ?? [],
    drr: r.drr,
    bytes_before: r.bytes_before,
    bytes_after: r.bytes_after,
    bytes_saved: r.bytes_before - r.bytes_after,
    files_before: r.files_before,
    files_after: r.files_after,
    rows_in: r.rows_in,
    rows_out: r.rows_out,
    partitions_crunched: r.partitions_crunched,
    partitions_skipped: r.partitions_skipped,
    partitions: r.partitions,
    settings: r.settings,
    duration_ms: r.duration_ms,
    table_version_before: r.table_version_before,
    committed_version: r.committed_version,
    validation: { rows_match: r.rows_in === r.rows_out },
  };
}
