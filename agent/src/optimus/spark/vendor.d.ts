/** Types for the two untyped pure-JS block decoders the Spark codecs use (only what they call). */
declare module "lz4js" {
  /** Decodes one raw LZ4 block of `src[sIndex, sIndex + sLength)` into `dst` at `dIndex`; returns the end index. */
  export function decompressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    dIndex: number,
  ): number;
  /** Encodes `src[sIndex, sIndex + sLength)` as one raw LZ4 block; returns its length (0: incompressible). */
  export function compressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    hashTable: Uint32Array,
  ): number;
  export function compressBound(n: number): number;
}

declare module "snappyjs" {
  /** Decodes one raw Snappy block. */
  export function uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array;
  /** Encodes one raw Snappy block. */
  export function compress(uncompressed: Uint8Array): Uint8Array;
}
