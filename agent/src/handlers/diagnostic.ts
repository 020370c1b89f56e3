/**
 * Diagnostic job kinds: `noop` returns at once, `sleep` waits while reporting progress. They touch
 * no data; an optional `uri` goes through the allow list like a real job's locations, and `fail`
 * makes either fail, so leasing, retries and cancellation can be tried end to end. The payloads
 * match what `POST /api/v1/jobs` accepts.
 */
import { setTimeout as delay } from "node:timers/promises";
import { z } from "zod";
import { defineHandler, JobError } from "../registry.ts";

const common = {
  uri: z.string().optional(),
  /** Fail instead of succeeding. */
  fail: z.boolean().default(false),
  /** With `fail`: whether another attempt may succeed. */
  retryable: z.boolean().default(true),
};

const NoopPayload = z.object(common);

export const noopHandler = defineHandler({
  kind: "noop",
  payload: NoopPayload,
  locations: (payload) => (payload.uri ? [payload.uri] : []),
  async run({ payload }) {
    if (payload.fail) throw new JobError("noop failed, as asked", { retryable: payload.retryable });
    return { ok: true };
  },
});

const SleepPayload = z.object({
  ...common,
  /** How long to sleep; the control plane's API leaves it optional, so it has a default. */
  ms: z.number().int().min(0).max(86_400_000).default(1000),
  /** How often progress is reported. */
  step_ms: z.number().int().min(1).max(60_000).default(100),
});

export const sleepHandler = defineHandler({
  kind: "sleep",
  payload: SleepPayload,
  locations: (payload) => (payload.uri ? [payload.uri] : []),
  async run({ payload, signal, progress }) {
    const started = Date.now();
    let elapsed = 0;
    while (elapsed < payload.ms) {
      // Rejects with the signal's reason as soon as the job is cancelled, refused or released.
      await delay(Math.min(payload.step_ms, payload.ms - elapsed), undefined, { signal });
      elapsed = Date.now() - started;
      progress({ fraction: Math.min(1, elapsed / Math.max(payload.ms, 1)), elapsed_ms: elapsed });
    }
    if (payload.fail)
      throw new JobError(`sleep failed after ${elapsed} ms, as asked`, { retryable: payload.retryable });
    return { slept_ms: elapsed };
  },
});

export const diagnosticHandlers = [noopHandler, sleepHandler];
