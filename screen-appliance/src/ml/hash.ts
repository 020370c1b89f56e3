/**
 * The hashing trick shared by training and inference: every feature string maps to one row of an
 * embedding table, so the model needs no vocabulary file and unseen words still get a row.
 * Row 0 is reserved for padding and stays zero.
 */

/** The FNV-1a state before any input. */
export const FNV1A_START = 0x811c9dc5;

/** The FNV-1a state `h` continued over the UTF-16 code units of `s`: hashing a string in parts. */
export function fnv1aUpdate(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** 32-bit FNV-1a over the UTF-16 code units of `s`. */
export function fnv1a(s: string): number {
  return fnv1aUpdate(FNV1A_START, s) >>> 0;
}

/** The row of a feature whose 32-bit hash is `hash`, in a table of `buckets` rows; never row 0. */
export function hashedRow(hash: number, buckets: number): number {
  return 1 + (hash % (buckets - 1));
}

/** A feature's row in a table of `buckets` rows, never the padding row 0. */
export function featureRow(feature: string, buckets: number): number {
  return hashedRow(fnv1a(feature), buckets);
}
