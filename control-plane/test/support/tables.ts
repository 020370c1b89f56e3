/**
 * Helpers for the tables, schedules, onboarding and scheduler suites: create tables through the API
 * and finish their onboarding jobs through the job service, as an agent would.
 */
import type { OnboardingRecipeResult } from "@lakesmith/shared/jobs";
import type { Job } from "../../src/db/schema.ts";
import { ADMIN_KEY, type TestPlane } from "../harness.ts";

export const RECIPE: OnboardingRecipeResult = {
  partition_columns: ["event_date"],
  partition_pattern: "event_date=YYYY-MM-DD",
  date_filter_column: "event_date",
  cluster_columns: ["customer_id"],
  enumerated_columns: ["region"],
};

/** A fake agent that can run everything the suites queue. */
export const FAKE_AGENT = {
  id: "agt_fake_for_tests",
  kinds: ["onboarding", "crunch", "vacuum", "partition_expiration", "opportunity_scan"],
  capabilities: ["s3", "gs", "file"],
  /** Allowed everything the suites' tables use (location keys, as offers compare them). */
  allow: ["s3://lake/", "s3://other/", "gs://other-lake/", "file:///"],
  endpoints: [] as string[],
};

export function adminCall(plane: TestPlane) {
  return (method: string, path: string, body?: unknown) =>
    plane.call(method, path, { token: ADMIN_KEY, ...(body !== undefined ? { body } : {}) });
}

export interface TableWire {
  id: string;
  name: string;
  onboarding_status: string;
  onboarding_job_id: string;
  [key: string]: unknown;
}

export async function createTable(plane: TestPlane, name: string, extra: Record<string, unknown> = {}) {
  const res = await adminCall(plane)("POST", "/api/v1/tables", {
    name,
    uri: `s3://lake/${name}`,
    format: "delta",
    priority: "P2",
    ...extra,
  });
  if (res.status !== 201) throw new Error(`creating ${name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as TableWire;
}

/**
 * Offers queued jobs to the fake agent until it gets `jobId`, hands the others back, and leases it.
 * Returns the leased job (its fence is what `complete` needs).
 */
export async function leaseJob(plane: TestPlane, jobId: string): Promise<Job> {
  const { jobs } = plane.services;
  const others: Job[] = [];
  let job: Job | undefined;
  for (;;) {
    job = await jobs.offerNext(FAKE_AGENT);
    if (!job || job.id === jobId) break;
    others.push(job);
  }
  for (const other of others) await jobs.reject(FAKE_AGENT.id, other.id, other.fence);
  if (!job) throw new Error(`job ${jobId} was not offered`);
  const acked = await jobs.ack(FAKE_AGENT.id, job.id, job.fence);
  if (acked.kind !== "done") throw new Error(`ack refused: ${acked.kind}`);
  return acked.job;
}

/** Completes the table's current onboarding job with a recipe (or a failure reason). */
export async function finishOnboarding(
  plane: TestPlane,
  tableId: string,
  outcome: { recipe?: unknown; error?: string } = { recipe: RECIPE },
) {
  const table = await plane.services.tables.find(tableId);
  if (!table?.onboardingJobId) throw new Error(`table ${tableId} has no onboarding job`);
  const job = await leaseJob(plane, table.onboardingJobId);
  return plane.services.jobs.complete(
    FAKE_AGENT.id,
    job.id,
    job.fence,
    outcome.error ? "failed" : "succeeded",
    outcome.error
      ? { error: outcome.error, retryable: false }
      : { result: outcome.recipe as Record<string, unknown> },
  );
}

/** A table whose onboarding is active, ready for schedules. */
export async function activeTable(plane: TestPlane, name: string, extra: Record<string, unknown> = {}) {
  const table = await createTable(plane, name, extra);
  await finishOnboarding(plane, table.id);
  return table;
}
