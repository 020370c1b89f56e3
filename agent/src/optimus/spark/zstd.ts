/**
 * Streaming zstd for event logs, by libzstd compiled to WebAssembly (@hpcc-js/wasm-zstd): every
 * window size Spark and Databricks write (Databricks: 128 MiB) decodes exactly.
 *
 * The package's public streaming call has two faults for this use: it hands its output back through
 * a JavaScript array, one element per byte (about 13 MB/s: a 136 MiB log took 10 s), and every
 * caller shares one decompression context (`Zstd.load` is a singleton), so two logs read at once
 * would garble each other. So each stream gets its own native context (`new _zstdClass()`), fed
 * from buffers kept in the module's heap, and each output is copied once into the stream's own
 * buffer and handed out as a view of it (about 700 MB/s on the same log). Those are the package's internals, pinned by the
 * lockfile: `streamingDecoder` checks they are there and otherwise falls back to the public call,
 * one stream at a time, so an upgrade can't break a read.
 *
 * Memory: the frame's window plus two 16 MiB output buffers, whatever the file's size. Input goes in
 * 16 KiB at a time; a piece whose output fills the buffer (only a crafted file can: JSON never
 * compresses 1,000 to 1) is refused with an error instead of losing bytes.
 */
import { Zstd } from "@hpcc-js/wasm-zstd";

/** Compressed bytes decoded per call: each call's output is one chunk. */
export const PIECE = 16 * 1024;
const OUT = 16 * 1024 * 1024;

/** One zstd stream's decoder: feed compressed pieces, get their output. */
interface Decoder {
  decode(piece: Uint8Array): Uint8Array;
  close(): void;
}

interface HeapBlock {
  ptr: number;
  size: number;
}

/** A native zstd context (an embind object: `delete` frees it). */
interface NativeZstd {
  reset(): void;
  decompressChunk(outPtr: number, outSize: number, inPtr: number, inSize: number): number;
  delete(): void;
}

/** The internals `streamingDecoder` uses, as far as it relies on them. */
interface Internals {
  _mainModule?: {
    malloc(size: number): HeapBlock;
    free(block: HeapBlock): void;
    _module?: { HEAPU8?: Uint8Array };
  };
  _zstdClass?: new () => Partial<NativeZstd>;
}

/**
 * Output copies of closed streams, reused by the next: a thread reading log after log allocates one
 * 16 MiB buffer per stream it reads at once, not one per log. (A freed buffer that large raises
 * glibc's mmap threshold, and the next ones then fragment the heap: two reader threads' peak RSS
 * grew by ~150 MB on 240 small logs.)
 */
const spareCopies: Uint8Array[] = [];

/** The fallback's one shared context is used by one stream at a time. */
let sharedContext: Promise<void> = Promise.resolve();

async function streamingDecoder(): Promise<Decoder> {
  const zstd = await Zstd.load();
  const { _mainModule: main, _zstdClass: NativeClass } = zstd as unknown as Internals;
  const module = main?._module;
  if (!main || !module?.HEAPU8 || typeof NativeClass !== "function") {
    const previous = sharedContext;
    let release = () => {};
    sharedContext = new Promise((resolve) => {
      release = resolve;
    });
    await previous;
    zstd.reset();
    return { decode: (piece) => zstd.decompressChunk(piece, OUT), close: release };
  }
  const native = new NativeClass() as NativeZstd;
  native.reset();
  const out = main.malloc(OUT);
  const input = main.malloc(PIECE);
  const copy = spareCopies.pop() ?? new Uint8Array(OUT);
  const heap = () => module.HEAPU8 as Uint8Array; // the heap may grow, which replaces the view
  return {
    decode(piece) {
      heap().set(piece, input.ptr);
      const n = native.decompressChunk(out.ptr, OUT, input.ptr, piece.byteLength);
      // Copied out of the heap into this stream's own buffer: another stream may grow the heap
      // (detaching every view of it) while this chunk's lines are still being read.
      copy.set(heap().subarray(out.ptr, out.ptr + n));
      return copy.subarray(0, n);
    },
    close() {
      main.free(out);
      main.free(input);
      native.delete();
      spareCopies.push(copy);
    },
  };
}

/**
 * The decompressed bytes of a zstd stream. Each chunk is a view of the decoder's output buffer,
 * valid until the next chunk is asked for: a consumer keeps what it needs by copying it (the line
 * splitter copies only a line's unfinished tail).
 */
export async function* zstd(
  source: AsyncIterable<Uint8Array>,
  name = "zstd stream",
): AsyncIterable<Uint8Array> {
  const decoder = await streamingDecoder();
  let first = true;
  try {
    for await (const chunk of source) {
      if (first && chunk.byteLength > 0) {
        first = false;
        // The decoder reads a stream that isn't zstd as empty: refuse it instead.
        if (!isZstdStart(chunk))
          throw new Error(`${name}: not a zstd stream (no zstd frame at its start); not read`);
      }
      for (let i = 0; i < chunk.byteLength; i += PIECE) {
        const out = decoder.decode(chunk.subarray(i, i + PIECE));
        if (out.byteLength >= OUT)
          throw new Error(`zstd event log: ${PIECE} compressed bytes decompress past ${OUT} bytes; not read`);
        if (out.byteLength > 0) yield out;
      }
    }
  } finally {
    decoder.close();
  }
}

const FRAME_MAGIC = 0xfd2fb528;

/** The little-endian 32-bit number at the start of `bytes`. */
const magicOf = (bytes: Uint8Array) =>
  ((bytes[0] ?? 0) | ((bytes[1] ?? 0) << 8) | ((bytes[2] ?? 0) << 16) | ((bytes[3] ?? 0) << 24)) >>> 0;

/** Whether `bytes` start with a zstd frame (magic 0xFD2FB528) or a skippable frame (0x184D2A5?). */
function isZstdStart(bytes: Uint8Array): boolean {
  if (bytes.byteLength < 4) return false;
  const magic = magicOf(bytes);
  return magic === FRAME_MAGIC || (magic & 0xfffffff0) === 0x184d2a50;
}

/** Bytes of a frame header that `zstdWindowOf` needs at most (magic, descriptor, window, dictionary id, size). */
export const FRAME_HEADER_MAX = 18;

/**
 * The history a decoder keeps for the zstd frame that starts `bytes`, as libzstd sizes it: the
 * header's window size, or the frame's content size where that is smaller (or is all the header
 * gives: a single-segment frame). `undefined` when `bytes` don't start with a zstd frame header
 * (not zstd, a skippable frame first, or too few bytes: see `FRAME_HEADER_MAX`).
 * Layout (RFC 8878, 3.1.1.1): magic, Frame_Header_Descriptor, then Window_Descriptor unless
 * single-segment, Dictionary_ID (0/1/2/4 bytes), Frame_Content_Size (0/1/2/4/8 bytes).
 */
export function zstdWindowOf(bytes: Uint8Array): number | undefined {
  if (bytes.byteLength < 5 || magicOf(bytes) !== FRAME_MAGIC) return undefined;
  const descriptor = bytes[4] as number;
  const singleSegment = (descriptor & 0x20) !== 0;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3] as number;
  const sizeFlag = descriptor >> 6;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag] as number;
  let at = 5;
  let window: number | undefined;
  if (!singleSegment) {
    const w = bytes[at++];
    if (w === undefined) return undefined;
    const base = 2 ** (10 + (w >> 3));
    window = base + (base / 8) * (w & 7);
  }
  at += dictionaryBytes;
  if (at + sizeBytes > bytes.byteLength) return undefined;
  let size: number | undefined;
  if (sizeBytes > 0) {
    size = 0;
    for (let i = sizeBytes - 1; i >= 0; i--) size = size * 256 + (bytes[at + i] as number);
    if (sizeBytes === 2) size += 256;
  }
  if (window === undefined) return size;
  return size === undefined ? window : Math.min(window, Math.max(size, 1));
}
