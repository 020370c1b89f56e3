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

const PIECE = 16 * 1024;
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
  const copy = new Uint8Array(OUT);
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

/** Whether `bytes` start with a zstd frame (magic 0xFD2FB528) or a skippable frame (0x184D2A5?). */
function isZstdStart(bytes: Uint8Array): boolean {
  if (bytes.byteLength < 4) return false;
  const magic =
    ((bytes[0] ?? 0) | ((bytes[1] ?? 0) << 8) | ((bytes[2] ?? 0) << 16) | ((bytes[3] ?? 0) << 24)) >>> 0;
  return magic === 0xfd2fb528 || (magic & 0xfffffff0) === 0x184d2a50;
}
