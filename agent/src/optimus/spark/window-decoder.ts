/**
 * The window thread: one thread decodes, for every reader thread, the zstd logs whose window is
 * large, so the pool holds one large window, not one per reader.
 *
 * Why: a zstd decoder keeps the frame's whole window (Databricks writes 128 MiB), and a thread's
 * WebAssembly memory never shrinks, so a reader that decoded one Databricks log holds ~130 MB until it
 * ends. With the large windows in one thread, a reader holds only small ones (Spark's own: 0.5-8 MiB)
 * and the pool's memory is one large window plus ~60 MB a reader, whatever the reader count.
 *
 * The protocol, over a `MessagePort` per reader (`WindowRequest` in, `WindowReply` out; buffers are
 * transferred, not copied):
 * - the reader sends `open`, then its compressed bytes as `input` pieces, then `end`;
 * - the thread answers each piece with its decompressed bytes as `output` messages, then `ack`;
 *   after `end`, `done`; a failure answers `error` (the stream is then over). `cancel` drops the stream.
 * - Output buffers go back (`return`) once the reader has split their lines, and are reused: the
 *   window thread allocates almost nothing, so no garbage waits there for a collection.
 * - Flow: the reader keeps at most `IN_FLIGHT` pieces unacknowledged, so the thread decodes the next
 *   piece while the reader splits the last one's lines, and never runs further ahead.
 * - One stream is decoded at a time (one window): a second `open` waits for the first stream to end.
 *   The pool's scheduler (`parallel.ts`) gives large-window logs to one reader at a time, so nothing
 *   waits in practice.
 */
import type { MessagePort } from "node:worker_threads";
import { codecOf } from "./codec.ts";
import { byCodec, type PartDecoder } from "./reader.ts";
import { PIECE as DECODE_PIECE, FRAME_HEADER_MAX, zstd, zstdWindowOf } from "./zstd.ts";

/** A zstd frame whose decoder keeps more than this is decoded in the window thread. */
export const LARGE_WINDOW = 16 * 2 ** 20;

/** Compressed bytes per `input` piece: the decoder's own piece, so one `output` each (~600 KB of JSON). */
const PIECE = DECODE_PIECE;
const IN_FLIGHT = 2;
const POOL = IN_FLIGHT + 2;
const MIN_BUFFER = 2 ** 20;

/** `stream`: the reader's number for the stream (so nothing of a cancelled one is mistaken for the next). */
export type WindowRequest =
  | ({ stream: number } & (
      | { type: "open"; name: string }
      | { type: "input"; bytes: ArrayBuffer }
      | { type: "end" }
      | { type: "cancel" }
    ))
  | { type: "return"; bytes: ArrayBuffer };

/** `output`: its bytes are the first `length` of `bytes`. */
export type WindowReply = { stream: number } & (
  | { type: "output"; bytes: ArrayBuffer; length: number }
  | { type: "ack" }
  | { type: "done" }
  | { type: "error"; message: string }
);

/** Messages of a port, awaited one at a time (those `take` accepts are handled as they come). */
class Inbox<T> {
  private queue: T[] = [];
  private wake: (() => void) | undefined;
  constructor(port: MessagePort, take: (message: T) => boolean = () => false) {
    port.on("message", (message: T) => {
      if (take(message)) return;
      this.queue.push(message);
      this.wake?.();
      this.wake = undefined;
    });
  }
  async next(): Promise<T> {
    while (this.queue.length === 0) await new Promise<void>((resolve) => (this.wake = resolve));
    return this.queue.shift() as T;
  }
}

/** A copy of `bytes` in a buffer of its own, to transfer. */
function own(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

/**
 * Output buffers the reader gave back, to reuse: the `POOL` largest are kept (as many as can be in
 * flight), none smaller than `MIN_BUFFER`, so a stream allocates almost nothing once under way.
 */
class BufferPool {
  private free: ArrayBuffer[] = [];
  put(buffer: ArrayBuffer): void {
    this.free.push(buffer);
    if (this.free.length > POOL) {
      this.free.sort((a, b) => b.byteLength - a.byteLength);
      this.free.length = POOL;
    }
  }
  /** `bytes` copied into a pooled buffer (or a new one, when none holds them). */
  copy(bytes: Uint8Array): ArrayBuffer {
    const i = this.free.findIndex((b) => b.byteLength >= bytes.byteLength);
    const buffer =
      i === -1
        ? new ArrayBuffer(Math.max(bytes.byteLength, MIN_BUFFER))
        : (this.free.splice(i, 1)[0] as ArrayBuffer);
    new Uint8Array(buffer).set(bytes);
    return buffer;
  }
}

// ---- the window thread's side ----

let turn: Promise<void> = Promise.resolve();

/** Serves one reader's port in the window thread, for as long as the thread runs. */
export function serveWindow(port: MessagePort): void {
  const pool = new BufferPool();
  const inbox = new Inbox<WindowRequest>(port, (request) => {
    if (request.type !== "return") return false;
    pool.put(request.bytes);
    return true;
  });
  void (async () => {
    for (;;) {
      const open = await inbox.next();
      if (open.type !== "open") continue; // the rest of a cancelled or failed stream
      const previous = turn;
      let release = () => {};
      turn = new Promise((resolve) => (release = resolve));
      await previous;
      try {
        await decodeStream(port, inbox, pool, open.stream, open.name);
      } finally {
        release();
      }
    }
  })();
}

async function decodeStream(
  port: MessagePort,
  inbox: Inbox<WindowRequest>,
  pool: BufferPool,
  stream: number,
  name: string,
): Promise<void> {
  let ended = false;
  let pieces = 0;
  // Asked for the next piece only once the last one's output is posted: that is its `ack`.
  async function* inputs(): AsyncIterable<Uint8Array> {
    for (;;) {
      if (pieces++ > 0) port.postMessage({ stream, type: "ack" } satisfies WindowReply);
      const request = await inbox.next();
      if (request.type === "return" || request.stream !== stream) continue;
      if (request.type === "input") yield new Uint8Array(request.bytes);
      else {
        ended = request.type === "end";
        return;
      }
    }
  }
  try {
    for await (const out of zstd(inputs(), name)) {
      const bytes = pool.copy(out);
      port.postMessage({ stream, type: "output", bytes, length: out.byteLength } satisfies WindowReply, [
        bytes,
      ]);
    }
    if (ended) port.postMessage({ stream, type: "done" } satisfies WindowReply);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    port.postMessage({ stream, type: "error", message } satisfies WindowReply);
  }
}

// ---- a reader's side ----

/**
 * The decompressed bytes of the zstd stream `source`, decoded in the window thread behind `port`:
 * the same chunks `zstd(source)` yields, or its error.
 */
async function* remoteZstd(
  source: AsyncIterable<Uint8Array>,
  port: MessagePort,
  inbox: Inbox<WindowReply>,
  stream: number,
  name: string,
): AsyncIterable<Uint8Array> {
  const send = (request: WindowRequest, transfer: ArrayBuffer[] = []) => port.postMessage(request, transfer);
  send({ stream, type: "open", name });
  const input = pieces(source)[Symbol.asyncIterator]();
  let inFlight = 0;
  let sent = false;
  let finished = false;
  try {
    for (;;) {
      while (!sent && inFlight < IN_FLIGHT) {
        const next = await input.next();
        if (next.done) {
          send({ stream, type: "end" });
          sent = true;
        } else {
          const bytes = own(next.value);
          send({ stream, type: "input", bytes }, [bytes]);
          inFlight++;
        }
      }
      const reply = await inbox.next();
      if (reply.stream !== stream) continue; // a cancelled stream's last replies
      if (reply.type === "output") {
        yield new Uint8Array(reply.bytes, 0, reply.length);
        // Its lines are split (the next chunk is asked for): the buffer goes back to be reused.
        send({ type: "return", bytes: reply.bytes }, [reply.bytes]);
      } else if (reply.type === "ack") inFlight--;
      else if (reply.type === "error") {
        finished = true;
        throw new Error(reply.message);
      } else {
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) {
      send({ stream, type: "cancel" });
      await input.return?.(); // and stop reading the log
    }
  }
}

/** A reader's end of its port to the window thread. */
export interface WindowClient {
  decode(source: AsyncIterable<Uint8Array>, name: string): AsyncIterable<Uint8Array>;
}

/** The reader's client for `port`: one stream at a time (a reader reads one log at a time). */
export function windowClient(port: MessagePort): WindowClient {
  const inbox = new Inbox<WindowReply>(port);
  let streams = 0;
  return { decode: (source, name) => remoteZstd(source, port, inbox, ++streams, name) };
}

/** `source` re-cut into pieces of at most `PIECE` bytes. */
async function* pieces(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  for await (const chunk of source)
    for (let i = 0; i < chunk.byteLength; i += PIECE) yield chunk.subarray(i, i + PIECE);
}

/** Thrown for a large-window log a reader was not given the window thread for (nothing of it was read). */
export class LargeWindowLog extends Error {
  constructor(key: string) {
    super(`${key}: a zstd window larger than ${LARGE_WINDOW / 2 ** 20} MiB is decoded in the window thread`);
  }
}

/**
 * A reader thread's decoder for one log's parts. A zstd part whose window is larger than
 * `LARGE_WINDOW` is decoded in the window thread when `window` is given (the scheduler handed this
 * reader the log with it); without it, the log's first part is refused with `LargeWindowLog` before a
 * line is read, so the scheduler can hand the log to the reader that holds the window thread. A later
 * part (a rolling log whose windows grew) is decoded here. Every other part decodes here, by codec.
 */
export function logDecoder(window: WindowClient | undefined): PartDecoder {
  let first = true;
  return (source, key) => {
    const mayRefuse = first;
    first = false;
    if (codecOf(key) !== "zstd") return byCodec(source, key);
    return (async function* () {
      const { head, rest } = await peek(source, FRAME_HEADER_MAX);
      const large = (zstdWindowOf(head) ?? 0) > LARGE_WINDOW;
      if (large && window) return yield* window.decode(rest, key);
      if (large && mayRefuse) {
        await rest[Symbol.asyncIterator]().return?.();
        throw new LargeWindowLog(key);
      }
      yield* zstd(rest, key);
    })();
  };
}

/** The first `n` bytes of `source` (fewer if it is shorter), and the whole of it to read on. */
async function peek(
  source: AsyncIterable<Uint8Array>,
  n: number,
): Promise<{ head: Uint8Array; rest: AsyncIterable<Uint8Array> }> {
  const iterator = source[Symbol.asyncIterator]();
  const taken: Uint8Array[] = [];
  let size = 0;
  let ended = false;
  while (size < n) {
    const next = await iterator.next();
    if (next.done) {
      ended = true;
      break;
    }
    taken.push(next.value);
    size += next.value.byteLength;
  }
  const rest: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]: () => {
      let i = 0;
      return {
        next: async () =>
          i < taken.length
            ? { done: false, value: taken[i++] as Uint8Array }
            : ended
              ? { done: true, value: undefined }
              : iterator.next(),
        return: async () => (await iterator.return?.()) ?? { done: true, value: undefined },
      };
    },
  };
  return { head: Buffer.concat(taken), rest };
}
