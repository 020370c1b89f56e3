/**
 * How `s3://` stores ride out a flaky object store: one policy, applied at two levels.
 *
 * - Requests: the SDK's retry middleware classifies each failure (network errors, timeouts,
 *   500/502/503/504 and throttling such as 503 SlowDown are transient; 4xx are not) and asks
 *   `retryStrategy` whether to try again. Transient failures are retried up to `attempts` in all,
 *   each after a jittered exponential delay (`Backoff`: [cap/2, cap], cap = min(maxMs, baseMs·2^n)).
 *   The SDK never retries a request whose body is a stream, so writes send buffers (whole bodies,
 *   or one multipart part at a time).
 * - Response bodies (`s3-read.ts`): a body that stalls for `stallTimeoutMs`, breaks, or ends short
 *   of its Content-Length is resumed from the byte where it stopped, with the same budget.
 *
 * When the budget is spent, `unavailable()` turns the last failure into a `StoreError` that names
 * the operation, the object and the status, and keeps the SDK's error as its `cause`.
 */
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

/** The HTTP status of an SDK error, when the server answered. */
export function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** Attempts the SDK made before giving up with `err` (1 when it did not retry). */
export function attemptsOf(err: unknown): number {
  return (err as { $metadata?: { attempts?: number } } | undefined)?.$metadata?.attempts ?? 1;
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
  const what = status !== undefined ? `${status} ${e.name}` : (e.code ?? e.name ?? "error");
  const tries = attempts === 1 ? "1 attempt" : `${attempts} attempts`;
  return new StoreError("unavailable", `${operation} ${uri} failed after ${tries}: ${what} (${e.message})`, {
    cause: err,
    ...(status !== undefined ? { status } : {}),
  });
}
