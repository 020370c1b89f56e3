/**
 * The hashing trick shared by training and inference: every feature string maps to one row of an
 * embedding table, so the model needs no vocabulary file and unseen words still get a row.
 * Row 0 is reserved for padding and stays zero.
 */

/** 32-bit FNV-1a over the UTF-16 code units of `s`. */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A feature's row in a table of `buckets` rows, never the padding row 0. */
export function featureRow(feature: string, buckets: number): number {
  return 1 + (fnv1a(feature) % (buckets - 1));
}
