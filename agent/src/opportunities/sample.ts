/**
 * The sample an opportunity scan rewrites: deterministic and bounded. Pure.
 *
 * - Drawn from the files a crunch would rewrite (`candidates`), in key order, so two scans of the
 *   same snapshot sample the same files.
 * - Spread evenly over them: every `candidates / maxFiles`-th file is considered in turn, and taken
 *   while the sample stays within `maxBytes`; a file larger than what is left is passed over.
 * - At most `maxFiles` files and `maxBytes` bytes; possibly empty (no candidates, or every candidate
 *   alone larger than `maxBytes`).
 */
import type { TableFile } from "../formats/index.ts";

export interface SampleBounds {
  maxFiles: number;
  maxBytes: number;
}

/** The sampled files, in key order. */
export function pickSample<F extends Pick<TableFile, "key" | "size">>(
  candidates: readonly F[],
  bounds: SampleBounds,
): F[] {
  const ordered = [...candidates].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (ordered.length === 0) return [];
  const step = ordered.length / Math.min(bounds.maxFiles, ordered.length);
  // The evenly spread files first, then the rest in order, so a passed-over file leaves room for another.
  const spread = Array.from({ length: Math.min(bounds.maxFiles, ordered.length) }, (_, i) =>
    Math.floor(i * step),
  );
  const order = new Set([...spread, ...ordered.keys()]);
  const picked: number[] = [];
  let bytes = 0;
  for (const i of order) {
    if (picked.length >= bounds.maxFiles) break;
    const file = ordered[i] as F;
    if (bytes + file.size > bounds.maxBytes) continue;
    picked.push(i);
    bytes += file.size;
  }
  return picked.sort((a, b) => a - b).map((i) => ordered[i] as F);
}
