/**
 * How remote stores ride out a flaky object store: one policy, applied at two levels.
 *
 * - Requests: network errors, timeouts, 500/502/503/504, 408 and throttling (429, 503 SlowDown or
 *   ServerBusy) are transient; other 4xx, 501 and 505 are answers. Transient failures are retried up
 *   to `attempts` in all, each after a jittered exponential delay (`Backoff`: [cap/2, cap],
 *   cap = min(maxMs, baseMs·2^n)). `s3://` and `gs://` hand the policy to the AWS SDK's retry
 *   middleware (`sdkRetryStrategy`); `azure://` switches its SDK's retries off and runs each request
 *   through `retrying`, which also abandons an attempt silent for `stallTimeoutMs`. Retried bodies
 *   are buffers, never streams, so writes send whole bodies or one part (block) at a time.
 * - Response bodies (`resume.ts`): a body that stalls for `stallTimeoutMs`, breaks, or ends short
 *   of its Content-Length is resumed from the byte where it stopped, with the same budget.
 *
 * When the budget is spent, `unavailable()` turns the last failure into a `StoreError` that names
 * the operation, the object and the status, and keeps the SDK's error as its `cause`.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { Backoff } from "../backoff.ts";
import { StoreError } from "./types.ts";

export interface RetryPolicy {
  /** Attempts per request or body read, the first included (at least 1). */
  attempts: number;
  /** The first retry's delay bound in ms; each retry doubles it up to `maxMs`. */
  baseMs: number;
  maxMs: number;
  /** A request or body that sends no byte for this long is abandoned and retried. */
  stallTimeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseMs: 100, maxMs: 20_000, stallTimeoutMs: 30_000 };

/** The SDK's classification of a failed attempt (its `RetryErrorInfo`). */
interface RetryErrorInfo {
  errorType: "TRANSIENT" | "THROTTLING" | "SERVER_ERROR" | "CLIENT_ERROR";
}

interface Token {
  getRetryCount(): number;
  getRetryDelay(): number;
  backoff: Backoff;
  delay: number;
  retries: number;
}

/**
 * The SDK retry strategy (its `RetryStrategyV2` interface) for `policy`: transient and throttling
 * failures retried until `attempts`; other 5xx (501, 505) and every 4xx are answers, not retried.
 */
export function sdkRetryStrategy(policy: RetryPolicy) {
  const token = (backoff: Backoff, retries: number, delay: number): Token => ({
    backoff,
    retries,
    delay,
    getRetryCount: () => retries,
    getRetryDelay: () => delay,
  });
  return {
    mode: "standard" as const,
    acquireInitialRetryToken: async (_scope: string) => token(new Backoff(policy.baseMs, policy.maxMs), 0, 0),
    refreshRetryTokenForRetry: async (previous: Token, info: RetryErrorInfo) => {
      const transient = info.errorType === "TRANSIENT" || info.errorType === "THROTTLING";
      if (!transient || previous.retries + 1 >= policy.attempts)
        throw new Error("no retry left for this request");
      return token(previous.backoff, previous.retries + 1, previous.backoff.next());
    },
    recordSuccess: (_token: Token) => {},
  };
}

/** The HTTP status of an SDK error (AWS `$metadata`, Azure `statusCode`), when the server answered. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { $metadata?: { httpStatusCode?: number }; statusCode?: unknown } | undefined;
  return e?.$metadata?.httpStatusCode ?? (typeof e?.statusCode === "number" ? e.statusCode : undefined);
}

/** Attempts made before `retrying` gave up with an error. */
const attemptsMade = new WeakMap<object, number>();

/** Attempts made before giving up with `err` (1 when there was no retry). */
export function attemptsOf(err: unknown): number {
  if (typeof err === "object" && err !== null && attemptsMade.has(err))
    return attemptsMade.get(err) as number;
  return (err as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts ?? 1;
}

/** Whether a status is a transient failure rather than an answer: 408, 429, 500, 502, 503, 504. */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 501 && status !== 505);
}

/**
 * Runs one request under `policy` for an SDK whose own retries are off: `attempt` gets a signal
 * that aborts it after `stallTimeoutMs` without an answer or a call to `alive()` (upload progress),
 * and is tried again while `transient(err)` holds (a stalled attempt always is), until `attempts`.
 * Throws the last error; `attemptsOf` reads how many attempts it took.
 */
export async function retrying<T>(
  policy: RetryPolicy,
  transient: (err: unknown) => boolean,
  attempt: (signal: AbortSignal, alive: () => void) => Promise<T>,
): Promise<T> {
  const backoff = new Backoff(policy.baseMs, policy.maxMs);
  for (let n = 1; ; n++) {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const alive = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(), policy.stallTimeoutMs);
    };
    alive();
    try {
      return await attempt(controller.signal, alive);
    } catch (caught) {
      const stalled = controller.signal.aborted;
      const err = stalled
        ? Object.assign(new Error(`no answer for ${policy.stallTimeoutMs} ms`, { cause: caught }), {
            name: "TimeoutError",
            code: "ETIMEDOUT",
          })
        : caught;
      if (n >= policy.attempts || !(stalled || transient(err))) {
        if (typeof err === "object" && err !== null) attemptsMade.set(err, n);
        throw err;
      }
    } finally {
      clearTimeout(timer);
    }
    await sleep(backoff.next());
  }
}

/**
 * A final failure as a `StoreError("unavailable")` that says what failed, on which object, after how
 * many attempts, and how: `PUT s3://lake/t/x.parquet failed after 5 attempts: 503 SlowDown (...)`.
 */
export function unavailable(
  operation: string,
  uri: string,
  err: unknown,
  attempts = attemptsOf(err),
): StoreError {
  const e = err as Error & { code?: string };
  const status = statusOf(err);
  // Azure's errors are all named RestError; their code says what happened (ServerBusy).
  const name = e.name === "RestError" && e.code ? e.code : e.name;
  const what = status !== undefined ? `${status} ${name}` : (e.code ?? e.name ?? "error");
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  return new StoreError("unavailable", `${operation} ${uri} failed after ${tries}: ${what} (${e.message})`, {
    cause: err,
    ...(status !== undefined ? { status } : {}),
  });
}

/**
 * A request's final error: a failure without an answer (network, stall), a 5xx or a 429, retried
 * until the budget ran out where it was transient, becomes `unavailable`; the store's other answers
 * (400, 403, 404, 409, 412) pass through as they are, for the caller to read.
 */
export function finalError(operation: string, uri: string, err: unknown): Error {
  const status = statusOf(err);
  if (status === undefined || status >= 500 || status === 429) return unavailable(operation, uri, err);
  return err as Error;
}
