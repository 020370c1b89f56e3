import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import type { LocalFileSource, WriteSource } from "./types.ts";

/** The bytes of a write source as a Node stream. */
export function sourceStream(source: WriteSource): Readable {
  if (typeof source === "string") return Readable.from([Buffer.from(source, "utf8")]);
  if (source instanceof Uint8Array) return Readable.from([source]);
  if (source instanceof Readable) return source;
  if ("file" in source) return createReadStream(source.file);
  return Readable.from(source);
}

/** The local file a source names, or null for bytes, text and streams. */
export function localFileOf(source: WriteSource): LocalFileSource | null {
  if (typeof source === "string" || source instanceof Uint8Array || source instanceof Readable) return null;
  return "file" in source ? source : null;
}

/** Reads a whole source into memory, for writes that need the length up front. */
export async function sourceBytes(source: WriteSource): Promise<Buffer> {
  if (typeof source === "string") return Buffer.from(source, "utf8");
  if (source instanceof Uint8Array) return Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  const chunks: Buffer[] = [];
  for await (const chunk of sourceStream(source)) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Reads a stream to its end; for small objects such as Delta log entries. */
export async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * A source's bytes as buffers of exactly `size` bytes, the last one shorter (and an empty source
 * as one empty buffer), read as they are needed: memory holds the parts not yet consumed.
 */
export async function* partsOf(source: WriteSource, size: number): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let length = 0;
  let yielded = false;
  for await (const chunk of sourceStream(source)) {
    let bytes = Buffer.from(chunk as Uint8Array);
    while (length + bytes.byteLength >= size) {
      const take = size - length;
      pending.push(bytes.subarray(0, take));
      bytes = bytes.subarray(take);
      yield Buffer.concat(pending);
      yielded = true;
      pending = [];
      length = 0;
    }
    if (bytes.byteLength > 0) {
      pending.push(bytes);
      length += bytes.byteLength;
    }
  }
  if (length > 0 || !yielded) yield Buffer.concat(pending);
}
