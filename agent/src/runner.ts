/**
 * Runs one leased job, in this order: find the handler of its kind, parse the payload with the
 * handler's schema, check every location the job would touch against the allow list, then run
 * the handler in a scratch folder of its own, which is removed afterwards. Anything refused before
 * the handler runs fails the job for good (`retryable: false`): another attempt would be refused
 * the same way. The runner reports what happened; the agent decides what to tell the plane.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { JobOffer } from "@lakesmith/shared/protocol";
import type { Logger } from "pino";
import { type AllowList, type AllowVerdict, locationsIn } from "./allow.ts";
import { type HandlerRegistry, JobError, type JobHandler } from "./registry.ts";

export type RunOutcome =
  | { outcome: "succeeded"; result: Record<string, unknown> | undefined }
  | { outcome: "failed"; error: string; retryable: boolean }
  /** The signal fired and the handler stopped without a result. */
  | { outcome: "aborted" };

export interface RunDeps {
  registry: HandlerRegistry;
  allow: AllowList;
  scratchRoot: string;
  log: Logger;
  signal: AbortSignal;
  progress(progress: Record<string, unknown>): void;
  /** Sends a part of the job's output (`JobContext.part`); without it, a part fails the job. */
  part?(part: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
}

/** Runs `job` to its end; never throws. */
export async function runJob(job: JobOffer, deps: RunDeps): Promise<RunOutcome> {
  const handler = deps.registry.get(job.kind);
  if (!handler) return refuse(`this agent has no handler for jobs of kind '${job.kind}'`);

  const parsed = handler.payload.safeParse(job.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `payload.${issue.path.join(".")}` : "payload";
    return refuse(`invalid ${job.kind} payload: ${where}: ${issue?.message ?? "unknown"}`);
  }

  const admitted = admit(handler, parsed.data, job.payload, deps.allow);
  if (!admitted.ok) return refuse(`refused by the agent's allow list: ${admitted.reason}`);

  const scratchDir = join(deps.scratchRoot, `${job.id}-${job.fence}`);
  const log = deps.log.child({ job_id: job.id, kind: job.kind, fence: job.fence });
  try {
    await rm(scratchDir, { recursive: true, force: true });
    await mkdir(scratchDir, { recursive: true });
    const result = await handler.run({
      job,
      payload: parsed.data,
      signal: deps.signal,
      scratchDir,
      progress: deps.progress,
      part: deps.part ?? (() => Promise.reject(new Error(`this runner takes no parts of ${job.kind} jobs`))),
      log,
    });
    return { outcome: "succeeded", result };
  } catch (err) {
    if (deps.signal.aborted) return { outcome: "aborted" };
    const message = err instanceof Error ? err.message : String(err);
    const retryable = err instanceof JobError ? err.retryable : true;
    if (!(err instanceof JobError)) log.error({ err }, "job handler threw");
    return { outcome: "failed", error: message, retryable };
  } finally {
    await rm(scratchDir, { recursive: true, force: true }).catch((err: Error) =>
      log.warn({ err: err.message, scratch: scratchDir }, "could not remove the job's scratch folder"),
    );
  }
}

/**
 * Whether the allow list permits everything the job would touch: the locations and endpoints its
 * handler declares, and every storage URI anywhere in the payload (a field a handler forgot to
 * declare is still checked), except those the handler declares it only compares against
 * (`references`). The agent asks this before it accepts an offer, and again before it runs.
 */
export function admit(
  handler: JobHandler,
  payload: unknown,
  rawPayload: unknown,
  allow: AllowList,
): AllowVerdict {
  const referenced = new Set(handler.references?.(payload) ?? []);
  const locations = new Set([
    ...handler.locations(payload),
    ...locationsIn(rawPayload).filter((uri) => !referenced.has(uri)),
  ]);
  const verdict = allow.checkAll([...locations]);
  if (!verdict.ok) return verdict;
  for (const endpoint of handler.endpoints?.(payload) ?? []) {
    const reached = allow.checkEndpoint(endpoint);
    if (!reached.ok) return reached;
  }
  return { ok: true };
}

function refuse(error: string): RunOutcome {
  return { outcome: "failed", error, retryable: false };
}
