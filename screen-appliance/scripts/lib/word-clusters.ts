/**
 * Word clusters from the pretrained vectors (lib/word-vectors.ts), for features that need a word's
 * kind at a position: a pretrained row is the same wherever its word stands, but a cluster id can be
 * hashed with a position ("the word before is in cluster 17"), as word clusters have long been used
 * in named-entity taggers. Spherical k-means (cosine) over the unit vectors, seeded and
 * deterministic; a coarse level groups the fine clusters' centroids the same way.
 *
 * Shipped as models/word-clusters.txt, one line per word of models/words.txt, in the same order:
 * `<fine> <coarse>` (src/ml/vocabulary.ts reads it).
 */
import { mulberry32 } from "./bag-mlp.ts";
import type { WordVectors } from "./word-vectors.ts";

export const FINE_CLUSTERS = 256;
export const COARSE_CLUSTERS = 32;
const ITERATIONS = 12;
const SEED = 20261127;

/** Cluster of each of `count` unit vectors of `width` (row-major), and the unit centroids. */
export function sphericalKMeans(
  vectors: Float32Array,
  width: number,
  k: number,
  seed = SEED,
  iterations = ITERATIONS,
): { assignment: Uint16Array; centroids: Float32Array } {
  const count = vectors.length / width;
  const random = mulberry32(seed);
  const centroids = new Float32Array(k * width);
  // Distinct starting points drawn at random from the vectors.
  const chosen = new Set<number>();
  while (chosen.size < Math.min(k, count)) chosen.add(Math.floor(random() * count));
  [...chosen].forEach((v, c) => {
    centroids.set(vectors.subarray(v * width, (v + 1) * width), c * width);
  });
  const assignment = new Uint16Array(count);
  const sums = new Float64Array(k * width);
  for (let iteration = 0; iteration < iterations; iteration++) {
    sums.fill(0);
    for (let v = 0; v < count; v++) {
      const base = v * width;
      let best = 0;
      let bestDot = Number.NEGATIVE_INFINITY;
      for (let c = 0; c < k; c++) {
        const cb = c * width;
        let dot = 0;
        for (let j = 0; j < width; j++) dot += (vectors[base + j] ?? 0) * (centroids[cb + j] ?? 0);
        if (dot > bestDot) {
          bestDot = dot;
          best = c;
        }
      }
      assignment[v] = best;
      const sb = best * width;
      for (let j = 0; j < width; j++) sums[sb + j] = (sums[sb + j] ?? 0) + (vectors[base + j] ?? 0);
    }
    for (let c = 0; c < k; c++) {
      let norm = 0;
      for (let j = 0; j < width; j++) norm += (sums[c * width + j] ?? 0) ** 2;
      // An empty cluster keeps its centroid.
      if (norm === 0) continue;
      const s = 1 / Math.sqrt(norm);
      for (let j = 0; j < width; j++) centroids[c * width + j] = (sums[c * width + j] ?? 0) * s;
    }
  }
  return { assignment, centroids };
}

/** Words the centroids are fit on (the most frequent ones); every word is then assigned to its nearest. */
const FIT_WORDS = 50_000;

/** The nearest of `k` unit centroids to each vector. */
function nearest(vectors: Float32Array, width: number, centroids: Float32Array, k: number): Uint16Array {
  const count = vectors.length / width;
  const out = new Uint16Array(count);
  for (let v = 0; v < count; v++) {
    let best = 0;
    let bestDot = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < k; c++) {
      let dot = 0;
      for (let j = 0; j < width; j++) dot += (vectors[v * width + j] ?? 0) * (centroids[c * width + j] ?? 0);
      if (dot > bestDot) {
        bestDot = dot;
        best = c;
      }
    }
    out[v] = best;
  }
  return out;
}

/** Each word's fine and coarse cluster. */
export function wordClusters(wordVectors: WordVectors): { fine: Uint16Array; coarse: Uint16Array } {
  const { vectors, width } = wordVectors;
  const fit = sphericalKMeans(vectors.subarray(0, FIT_WORDS * width), width, FINE_CLUSTERS);
  const fine = nearest(vectors, width, fit.centroids, FINE_CLUSTERS);
  const groups = sphericalKMeans(fit.centroids, width, COARSE_CLUSTERS, SEED + 1, 30);
  const coarse = fine.map((c) => groups.assignment[c] ?? 0);
  return { fine, coarse };
}

/** The lines of models/word-clusters.txt. */
export function clusterLines(clusters: { fine: Uint16Array; coarse: Uint16Array }): string {
  return `${Array.from(clusters.fine, (f, i) => `${f} ${clusters.coarse[i]}`).join("\n")}\n`;
}
