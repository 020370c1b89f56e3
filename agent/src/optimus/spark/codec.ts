/**
 * Decompression of Spark event logs, chosen by the file's suffix as Spark names them
 * (`spark.eventLog.compression.codec`): `.zstd` (zstd frames), `.lz4` (lz4-java's `LZ4BlockOutputStream`
 * framing: `LZ4Block` magic, token, little-endian lengths and checksum, then a raw LZ4 block) and
 * `.snappy` (snappy-java's `SnappyOutputStream` framing: `\x82SNAPPY\0` header, then big-endian
 * length-prefixed raw Snappy blocks). Anything else is read as plain text. Every decoder is streaming:
 * it holds at most one compressed block (lz4-java and snappy-java cap blocks at a few MiB) or the
 * zstd window (see `zstd.ts`), never the whole file.
 */
/// <reference path="./vendor.d.ts" />
import { decompressBlock } from "lz4js";
import { uncompress as snappyBlock } from "snappyjs";
import { zstd } from "./zstd.ts";

export type SparkCodec = "zstd" | "lz4" | "snappy" | "none";

/** The codec a log file's name says it was written with (`.inprogress`, still being written, ignored). */
export function codecOf(key: string): SparkCodec {
  const name = key.replace(/\.inprogress$/, "");
  if (/\.(zstd|zst)$/.test(name)) return "zstd";
  if (name.endsWith(".lz4")) return "lz4";
  if (name.endsWith(".snappy")) return "snappy";
  return "none";
}

/** The decompressed bytes of `source`, chunk by chunk. */
export function decompress(
  source: AsyncIterable<Uint8Array>,
  codec: SparkCodec,
  name?: string,
): AsyncIterable<Uint8Array> {
  switch (codec) {
    case "zstd":
      return zstd(source, name);
    case "lz4":
      return lz4Blocks(source);
    case "snappy":
      return snappyBlocks(source);
    default:
      return source;
  }
}

/** Accumulates input so a framing parser can take exact byte counts from it. */
class ByteQueue {
  private chunks: Uint8Array[] = [];
  size = 0;
  push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.size += chunk.byteLength;
  }
  /** The first `n` bytes, removed from the queue (the caller checked `size >= n`). */
  take(n: number): Uint8Array {
    const all = this.joined();
    this.chunks = all.byteLength > n ? [all.subarray(n)] : [];
    this.size -= n;
    return all.subarray(0, n);
  }
  /** The first `n` bytes, left in the queue. */
  peek(n: number): Uint8Array {
    const all = this.joined();
    this.chunks = [all];
    return all.subarray(0, n);
  }
  private joined(): Uint8Array {
    return this.chunks.length === 1 && this.chunks[0] ? this.chunks[0] : Buffer.concat(this.chunks);
  }
}

const LZ4_MAGIC = Buffer.from("LZ4Block");
const LZ4_HEADER = LZ4_MAGIC.byteLength + 13;
const LZ4_RAW = 0x10;

async function* lz4Blocks(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const queue = new ByteQueue();
  for await (const chunk of source) {
    queue.push(chunk);
    for (;;) {
      if (queue.size < LZ4_HEADER) break;
      const header = Buffer.from(queue.peek(LZ4_HEADER));
      if (!header.subarray(0, LZ4_MAGIC.byteLength).equals(LZ4_MAGIC))
        throw new Error("lz4 event log: a block does not start with LZ4Block (not lz4-java's block stream)");
      const method = header.readUInt8(8) & 0xf0;
      const compressed = header.readInt32LE(9);
      const length = header.readInt32LE(13);
      if (queue.size < LZ4_HEADER + compressed) break;
      queue.take(LZ4_HEADER);
      const body = queue.take(compressed);
      if (length === 0) continue;
      if (method === LZ4_RAW) {
        yield Uint8Array.from(body);
        continue;
      }
      const out = new Uint8Array(length);
      const end = decompressBlock(body, out, 0, compressed, 0);
      if (end !== length) throw new Error(`lz4 event log: a block decoded to ${end} bytes, not ${length}`);
      yield out;
    }
  }
  if (queue.size > 0) throw new Error("lz4 event log: the file ends inside a block");
}

const SNAPPY_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const SNAPPY_HEADER = SNAPPY_MAGIC.byteLength + 8;

async function* snappyBlocks(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const queue = new ByteQueue();
  let headerSeen = false;
  for await (const chunk of source) {
    queue.push(chunk);
    if (!headerSeen) {
      if (queue.size < SNAPPY_HEADER) continue;
      const header = Buffer.from(queue.take(SNAPPY_HEADER));
      if (!header.subarray(0, SNAPPY_MAGIC.byteLength).equals(SNAPPY_MAGIC))
        throw new Error("snappy event log: no snappy-java stream header");
      headerSeen = true;
    }
    while (queue.size >= 4) {
      const length = Buffer.from(queue.peek(4)).readInt32BE(0);
      if (queue.size < 4 + length) break;
      queue.take(4);
      yield snappyBlock(Uint8Array.from(queue.take(length)));
    }
  }
  if (queue.size > 0) throw new Error("snappy event log: the file ends inside a block");
}
