/**
 * A table commit as the spec's `CommitTableRequest` has it: requirements the catalog checks
 * against the current metadata, then updates it applies, atomically. Ids are `bigint` so that
 * `stringifyJson` writes them exactly.
 *
 * The outcome is returned, not thrown, because each one tells the caller what to do next:
 * - `ok`: committed; `metadataLocation` and `metadata` are the table's new state.
 * - `conflict` (409 CommitFailedException): a requirement failed, nothing was applied; reload the
 *   table, plan again and retry.
 * - `unknown` (500, 502, 503, 504 and other 5xx but 501, a timeout or a lost connection:
 *   CommitStateUnknownException): the commit may have been applied. Reload the table and look for
 *   the commit's snapshot before anything else; retrying blindly could apply it twice or clean up
 *   files a live snapshot uses.
 */
import type { TableMetadata } from "../metadata.ts";

export type TableRequirement =
  | { type: "assert-create" }
  | { type: "assert-table-uuid"; uuid: string }
  /** `snapshot-id: null` asserts that the ref does not exist. */
  | { type: "assert-ref-snapshot-id"; ref: string; "snapshot-id": bigint | null }
  | { type: "assert-current-schema-id"; "current-schema-id": number }
  | { type: "assert-default-spec-id"; "default-spec-id": number };

/** A snapshot as the metadata JSON (and `add-snapshot`) spell it. */
export interface SnapshotJson {
  "snapshot-id": bigint;
  "parent-snapshot-id"?: bigint;
  "sequence-number"?: number;
  "timestamp-ms": number;
  "manifest-list": string;
  summary: { operation: "append" | "replace" | "overwrite" | "delete"; [key: string]: string };
  "schema-id"?: number;
}

export type TableUpdate =
  | { action: "add-snapshot"; snapshot: SnapshotJson }
  | {
      action: "set-snapshot-ref";
      "ref-name": string;
      type: "branch" | "tag";
      "snapshot-id": bigint;
      "max-ref-age-ms"?: number;
      "max-snapshot-age-ms"?: number;
      "min-snapshots-to-keep"?: number;
    }
  | { action: "remove-snapshots"; "snapshot-ids": bigint[] }
  | { action: "remove-snapshot-ref"; "ref-name": string }
  | { action: "set-properties"; updates: Record<string, string> }
  | { action: "remove-properties"; removals: string[] };

export interface TableCommit {
  requirements: TableRequirement[];
  updates: TableUpdate[];
}

export type CommitResult =
  | { ok: true; metadataLocation: string; metadata: TableMetadata }
  | { ok: false; kind: "conflict" | "unknown"; message: string };

/** Whether a commit answered with `status` may have been applied (CommitStateUnknownException). */
export function commitStateUnknown(status: number): boolean {
  return status >= 500 && status !== 501;
}
