/**
 * A store's reads served to a worker thread over a `MessagePort`: the thread reads objects through
 * `portStore(port)`, and the thread that owns the store answers with `serveReads(store, port)`.
 *
 * Why: a worker thread that opened its own store would load the store's SDK (20-40 MB a thread for
 * the S3 or Azure client) and need the store's options in plain data. Served reads cost a thread
 * nothing but the bytes in flight, and work for any `ObjectStore`, however it was made.
 *
 * Protocol (buffers are transferred, not copied): the thread sends `read` (key, range); the owner
 * answers with `chunk`s, then `end`, or `fail` (the `StoreError` code and message, rethrown as a
 * `StoreError` in the thread). The thread `ack`s each chunk it has taken; the owner keeps at most
 * `IN_FLIGHT` chunks unacknowledged, so a slow reader holds the object back rather than buffering it.
 * `cancel` stops a read (the reader stopped early). Only `read` is served: the rest of the
 * `ObjectStore` interface throws `unsupported` in the thread.
 */

import { Readable } from "node:stream";
import type { MessagePort } from "node:worker_threads";
import { type ByteRange, type ObjectStore, StoreError, type StoreErrorCode } from "./types.ts";

const IN_FLIGHT = 4;

type ReadRequest =
  | { type: "read"; id: number; key: string; range?: ByteRange }
  | { type: "ack"; id: number }
  | { type: "cancel"; id: number };

type ReadReply =
  | { type: "chunk"; id: number; bytes: ArrayBuffer }
  | { type: "end"; id: number }
  | { type: "fail"; id: number; code: StoreErrorCode | undefined; message: string };

/** Serves `store`'s reads on `port` until the port closes. */
export function serveReads(store: ObjectStore, port: MessagePort): void {
  const reads = new Map<number, { credit: () => void; cancel: () => void }>();
  const reply = (message: ReadReply, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  port.on("message", (request: ReadRequest) => {
    const open = reads.get(request.id);
    if (request.type === "ack") open?.credit();
    else if (request.type === "cancel") open?.cancel();
    else void serve(request.id, request.key, request.range);
  });

  async function serve(id: number, key: string, range?: ByteRange): Promise<void> {
    let unacked = 0;
    let wake: (() => void) | undefined;
    let cancelled = false;
    const resume = () => {
      wake?.();
      wake = undefined;
    };
    reads.set(id, {
      credit: () => {
        unacked--;
        resume();
      },
      cancel: () => {
        cancelled = true;
        resume();
      },
    });
    let body: Readable | undefined;
    try {
      body = await store.read(key, range);
      for await (const chunk of body as AsyncIterable<Uint8Array>) {
        while (unacked >= IN_FLIGHT && !cancelled) await new Promise<void>((resolve) => (wake = resolve));
        if (cancelled) break;
        const bytes = new Uint8Array(chunk).buffer;
        unacked++;
        reply({ type: "chunk", id, bytes }, [bytes]);
      }
      if (!cancelled) reply({ type: "end", id });
    } catch (error) {
      const code = error instanceof StoreError ? error.code : undefined;
      reply({ type: "fail", id, code, message: error instanceof Error ? error.message : String(error) });
    } finally {
      body?.destroy();
      reads.delete(id);
    }
  }
}

/** A read-only store in a worker thread, whose reads `serveReads` answers on the other end of `port`. */
export function portStore(uri: string, port: MessagePort): ObjectStore {
  const reads = new Map<number, (reply: ReadReply) => void>();
  let next = 0;
  port.on("message", (reply: ReadReply) => reads.get(reply.id)?.(reply));
  const send = (request: ReadRequest) => port.postMessage(request);
  const unsupported = (what: string) => () => {
    throw new StoreError("unsupported", `${what}: a worker thread's store serves reads only (${uri})`);
  };
  return {
    uri,
    uriOf: (key) => uri + key,
    async read(key, range) {
      const id = next++;
      const queue: ReadReply[] = [];
      let wake: (() => void) | undefined;
      reads.set(id, (reply) => {
        queue.push(reply);
        wake?.();
        wake = undefined;
      });
      send({ type: "read", id, key, range });
      async function* chunks(): AsyncIterable<Uint8Array> {
        let done = false;
        try {
          for (;;) {
            while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
            const reply = queue.shift() as ReadReply;
            if (reply.type === "end") {
              done = true;
              return;
            }
            if (reply.type === "fail") {
              done = true;
              throw new StoreError(reply.code ?? "unavailable", reply.message);
            }
            send({ type: "ack", id });
            yield new Uint8Array(reply.bytes);
          }
        } finally {
          if (!done) send({ type: "cancel", id });
          reads.delete(id);
        }
      }
      return Readable.from(chunks(), { objectMode: false });
    },
    list: unsupported("list"),
    head: unsupported("head"),
    download: unsupported("download"),
    write: unsupported("write"),
    writeIfAbsent: unsupported("writeIfAbsent"),
    deleteMany: unsupported("deleteMany"),
  };
}
