/**
 * 32-bit Murmur3 (x86 variant, seed 0 unless given), the hash of Iceberg's bucket transform
 * (spec Appendix B). Returns the signed 32-bit result, as Java's Guava `murmur3_32` does.
 */
const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));

const mixK = (k: number) => Math.imul(rotl(Math.imul(k, C1), 15), C2);

/** Murmur3 x86 32-bit hash of `bytes`. */
export function murmur3(bytes: Uint8Array, seed = 0): number {
  let h = seed | 0;
  const tail = bytes.length & ~3;
  for (let i = 0; i < tail; i += 4) {
    const k =
      (bytes[i] as number) |
      ((bytes[i + 1] as number) << 8) |
      ((bytes[i + 2] as number) << 16) |
      ((bytes[i + 3] as number) << 24);
    h = (Math.imul(rotl(h ^ mixK(k), 13), 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const rest = bytes.length & 3;
  if (rest >= 3) k ^= (bytes[tail + 2] as number) << 16;
  if (rest >= 2) k ^= (bytes[tail + 1] as number) << 8;
  if (rest >= 1) h ^= mixK(k ^ (bytes[tail] as number));
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h | 0;
}
