/**
 * A remote object's body that is whole or an error, never a part passed off as the object; shared
 * by the `s3://`, `gs://` and `azure://` stores, each mapping its SDK's answer to a `BodyAnswer`.
 *
 * - Every byte is counted against the first answer's Content-Length. A body that breaks (reset,
 *   premature close), stalls (no byte for `stallTimeoutMs`) or ends short is resumed with a ranged
 *   GET from the first missing byte, `If-Match` the first answer's ETag, so the pieces are one
 *   version of the object; a 412 there means the object was replaced: `changed`.
 * - Failures of the body share one budget of `attempts`, each retry after a jittered backoff; the
 *   ranged GETs themselves are retried like any request. When the budget is spent the stream
 *   errors with `unavailable`, so a consumer that writes a file (a download) discards it.
 * - A whole-object read is checked against the full-object checksum the store gave, if any
 *   (`checksum.ts`), at the end, resumed or not: a mismatch errors with `corrupt`. An error after
 *   the last promised byte is a checksum failure too (an SDK validates on its own where it can),
 *   never a reason to resume.
 */
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { Backoff } from "../backoff.ts";
import type { Checksum } from "./checksum.ts";
import { type RetryPolicy, statusOf, unavailable } from "./retry.ts";
import { type ByteRange, StoreError } from "./types.ts";

/** One answer to a GET, whatever the store. */
export interface BodyAnswer {
  body: Readable;
  /** The bytes this answer promises (its Content-Length). */
  length: number | undefined;
  etag: string | undefined;
}

export interface ResumeOptions {
  uri: string;
  /** The range the caller asked for, if any. */
  range: ByteRange | undefined;
  policy: RetryPolicy;
  /** The object's full checksum, checked at the end of a whole-object read. */
  checksum?: Checksum | undefined;
  /** Issues a GET for `range`, conditional on `ifMatch` where given. */
  get(range: ByteRange, ifMatch: string | undefined): Promise<BodyAnswer>;
}

/** The body of `first` as a stream that resumes after breaks and stalls (see the module comment). */
export function resumingBody(first: BodyAnswer, options: ResumeOptions): Readable {
  quiet(first);
  return Readable.from(chunks(first, options), { objectMode: false });
}

/**
 * Keeps a body's error from crashing the process while nobody reads it yet (the stream is read
 * lazily, and the connection may break before the first read); reading it still throws the error.
 */
function quiet(answer: BodyAnswer): void {
  answer.body.on("error", () => {});
}

async function* chunks(first: BodyAnswer, options: ResumeOptions): AsyncGenerator<Buffer> {
  const { uri, range, policy } = options;
  const expected = first.length;
  const etag = first.etag;
  const check = range ? undefined : options.checksum;
  const backoff = new Backoff(policy.baseMs, policy.maxMs);
  let answer = first;
  let received = 0;
  let failures = 0;
  try {
    yield* resumed();
  } finally {
    answer.body.destroy();
  }
  if (check && !check.matches())
    throw new StoreError(
      "corrupt",
      `GET ${uri}: the bytes read do not match the object's ${check.name} checksum`,
    );

  async function* resumed(): AsyncGenerator<Buffer> {
    for (;;) {
      const body = answer.body;
      try {
        for await (const chunk of stallGuarded(body, policy.stallTimeoutMs)) {
          received += chunk.byteLength;
          check?.update(chunk);
          yield chunk;
        }
        if (expected === undefined || received >= expected) return;
        throw new Error(`the body ended after ${received} of ${expected} bytes`);
      } catch (err) {
        body.destroy();
        if (expected !== undefined && received >= expected)
          throw new StoreError("corrupt", `GET ${uri}: ${(err as Error).message}`, { cause: err });
        if (++failures >= policy.attempts) throw unavailable("GET", uri, err, failures);
        await sleep(backoff.next());
        const start = (range?.start ?? 0) + received;
        try {
          answer = await options.get(range?.end === undefined ? { start } : { start, end: range.end }, etag);
          quiet(answer);
        } catch (e) {
          if (statusOf(e) !== 412) throw unavailable("GET", uri, e);
          const message = `GET ${uri}: the object was replaced while it was read; read it again`;
          throw new StoreError("changed", message, { cause: e, status: 412 });
        }
      }
    }
  }
}

/** The body's chunks; a wait of `ms` for the next one destroys the body with a timeout error. */
async function* stallGuarded(body: Readable, ms: number): AsyncGenerator<Buffer> {
  const it = body[Symbol.asyncIterator]();
  for (;;) {
    const timer = setTimeout(() => {
      body.destroy(
        Object.assign(new Error(`no byte for ${ms} ms`), { name: "TimeoutError", code: "ETIMEDOUT" }),
      );
    }, ms);
    let next: IteratorResult<unknown>;
    try {
      next = await it.next();
    } finally {
      clearTimeout(timer);
    }
    if (next.done) return;
    const chunk = next.value;
    yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
  }
}
