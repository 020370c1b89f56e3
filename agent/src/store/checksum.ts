/**
 * Full-object checksums a store hands out with a whole object, as running checks over the bytes
 * read (`resume.ts` checks them at the end of a read):
 *
 * - S3 (`x-amz-checksum-mode: ENABLED`): CRC32, SHA-256 or SHA-1, base64, stored for objects the
 *   SDK uploaded. Composite (per-part) checksums, written `<base64>-<parts>`, can't be checked
 *   over the whole body and are skipped.
 * - Azure: the blob's Content-MD5, which the service stores for a blob written in one request.
 */
import { createHash } from "node:crypto";
import { crc32 } from "node:zlib";
import type { GetObjectCommandOutput } from "@aws-sdk/client-s3";

export interface Checksum {
  name: string;
  update(chunk: Buffer): void;
  matches(): boolean;
}

/** A running check of the base64 digest `expected` with `algorithm` (`crc32` or a hash name). */
export function runningChecksum(
  name: string,
  algorithm: "crc32" | "md5" | "sha1" | "sha256",
  expected: string,
): Checksum {
  if (algorithm === "crc32") {
    let value = 0;
    return {
      name,
      update: (chunk) => {
        value = crc32(chunk, value);
      },
      matches: () => {
        const bytes = Buffer.alloc(4);
        bytes.writeUInt32BE(value);
        return bytes.toString("base64") === expected;
      },
    };
  }
  const hash = createHash(algorithm);
  return { name, update: (chunk) => hash.update(chunk), matches: () => hash.digest("base64") === expected };
}

/** The full-object checksum an S3 answer carries, if any. */
export function s3Checksum(answer: GetObjectCommandOutput): Checksum | undefined {
  if (answer.ChecksumType === "COMPOSITE") return undefined;
  const full = (value: string | undefined) => (value && !value.includes("-") ? value : undefined);
  for (const [name, algorithm, expected] of [
    ["CRC32", "crc32", full(answer.ChecksumCRC32)],
    ["SHA-256", "sha256", full(answer.ChecksumSHA256)],
    ["SHA-1", "sha1", full(answer.ChecksumSHA1)],
  ] as const) {
    if (expected) return runningChecksum(name, algorithm, expected);
  }
  return undefined;
}
