/**
 * Streaming zstd for event logs. Two decoders: fzstd (pure JS, fast) for frames whose window is at
 * most 32 MiB, and libzstd compiled to WebAssembly (@hpcc-js/wasm-zstd) for larger windows
 * (Databricks writes 128 MiB ones): fzstd reads a match offset with one 32-bit load shifted by up to
 * 7 bits, so offsets of 26 bits or more come out wrong, silently. The decoder is chosen from the
 * first frame's header; a single-segment frame (no window descriptor) also goes to libzstd.
 *
 * Memory: the frame's window plus one output buffer, whatever the file's size. libzstd is fed
 * 1 KiB at a time into a 16 MiB output buffer; a piece that fills it (only a crafted file can: JSON
 * never compresses 16,000 to 1) is refused with an error instead of losing bytes.
 */
import { Zstd } from "@hpcc-js/wasm-zstd";
import { Decompress } from "fzstd";

const FZSTD_MAX_WINDOW = 32 * 1024 * 1024;
const PIECE = 1024;
const OUT = 16 * 1024 * 1024;

/** The window a zstd frame header declares, or `undefined` for a single-segment frame. */
export function zstdWindow(header: Uint8Array): number | undefined {
  if (header.byteLength < 6) return undefined;
  const single = (header[4] ?? 0) & 0x20;
  if (single) return undefined;
  const descriptor = header[5] ?? 0;
  const base = 2 ** (10 + (descriptor >> 3));
  return base + (base / 8) * (descriptor & 7);
}

/** The decompressed bytes of a zstd stream. */
export async function* zstd(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const iterator = source[Symbol.asyncIterator]();
  const first: Uint8Array[] = [];
  let seen = 0;
  while (seen < 6) {
    const next = await iterator.next();
    if (next.done) break;
    first.push(next.value);
    seen += next.value.byteLength;
  }
  const head = Buffer.concat(first);
  async function* rest(): AsyncIterable<Uint8Array> {
    if (head.byteLength > 0) yield head;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  const window = zstdWindow(head);
  yield* window !== undefined && window <= FZSTD_MAX_WINDOW ? withFzstd(rest()) : withLibzstd(rest());
}

async function* withFzstd(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let out: Uint8Array[] = [];
  // fzstd hands out views of its window, which the next push overwrites: keep copies.
  const stream = new Decompress((chunk) => {
    out.push(chunk.slice());
  });
  for await (const chunk of source) {
    stream.push(chunk);
    if (out.length > 0) {
      yield* out;
      out = [];
    }
  }
  stream.push(new Uint8Array(0), true);
  yield* out;
}

async function* withLibzstd(source: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const zstd = await Zstd.load();
  zstd.reset();
  for await (const chunk of source) {
    for (let i = 0; i < chunk.byteLength; i += PIECE) {
      const out = zstd.decompressChunk(chunk.subarray(i, i + PIECE), OUT);
      if (out.byteLength >= OUT)
        throw new Error(`zstd event log: ${PIECE} compressed bytes decompress past ${OUT} bytes; not read`);
      if (out.byteLength > 0) yield out;
    }
  }
}
