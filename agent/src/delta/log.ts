/**
 * The files of `_delta_log/`: which commits and which complete checkpoints exist, by version.
 *
 * The listing is the truth and `_last_checkpoint` only a hint: a writer may have written a newer
 * checkpoint and died before updating it (fixture `table_failed_last_checkpoint_update`), or never
 * written it at all. Multi-part checkpoints count only when every part is there. UUID-named (V2)
 * checkpoints are noted but not read: a table that needs one to be loaded is refused by the loader
 * with that reason.
 */
import { type ObjectInfo, type ObjectStore, readAll, StoreError } from "../store/index.ts";

export const LOG_DIR = "_delta_log/";
export const LAST_CHECKPOINT_KEY = `${LOG_DIR}_last_checkpoint`;

/** Why a table's log can't be read (not a bug of the caller: a missing or unsupported log). */
export class DeltaLogError extends Error {
  override readonly name = "DeltaLogError";
  constructor(
    readonly code: "not_a_table" | "missing_version" | "unsupported" | "corrupt",
    message: string,
  ) {
    super(message);
  }
}

export interface LogListing {
  commits: Map<number, ObjectInfo>;
  /** Complete classic checkpoints: one part, or every part of a multi-part one, in part order. */
  checkpoints: Map<number, ObjectInfo[]>;
  /** Versions that have a UUID-named (V2 spec) checkpoint. */
  v2Checkpoints: Set<number>;
}

export interface LastCheckpoint {
  version: number;
  size?: number;
  parts?: number | null;
  v2Checkpoint?: unknown;
}

/** `_delta_log/00000000000000000042.json` for 42. */
export function commitKey(version: number): string {
  return `${LOG_DIR}${pad(version)}.json`;
}

/** `_delta_log/00000000000000000042.checkpoint.parquet` for 42. */
export function checkpointKey(version: number): string {
  return `${LOG_DIR}${pad(version)}.checkpoint.parquet`;
}

function pad(version: number): string {
  return String(version).padStart(20, "0");
}

const COMMIT = /^(\d{20})\.json$/;
const SINGLE_CHECKPOINT = /^(\d{20})\.checkpoint\.parquet$/;
const PART_CHECKPOINT = /^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$/;
const UUID_CHECKPOINT = /^(\d{20})\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$/;

/** Lists `_delta_log/` (top level only) into commits and checkpoints. */
export async function listLog(store: ObjectStore): Promise<LogListing> {
  const commits = new Map<number, ObjectInfo>();
  const single = new Map<number, ObjectInfo>();
  const parts = new Map<string, { total: number; found: Map<number, ObjectInfo> }>();
  const v2Checkpoints = new Set<number>();
  for await (const object of store.list(LOG_DIR)) {
    const name = object.key.slice(LOG_DIR.length);
    if (name.includes("/")) continue;
    let m = COMMIT.exec(name);
    if (m) {
      commits.set(Number(m[1]), object);
      continue;
    }
    m = SINGLE_CHECKPOINT.exec(name);
    if (m) {
      single.set(Number(m[1]), object);
      continue;
    }
    m = PART_CHECKPOINT.exec(name);
    if (m) {
      const id = `${Number(m[1])}/${Number(m[3])}`;
      const entry = parts.get(id) ?? { total: Number(m[3]), found: new Map() };
      entry.found.set(Number(m[2]), object);
      parts.set(id, entry);
      continue;
    }
    m = UUID_CHECKPOINT.exec(name);
    if (m) v2Checkpoints.add(Number(m[1]));
  }
  const checkpoints = new Map<number, ObjectInfo[]>();
  for (const [version, object] of single) checkpoints.set(version, [object]);
  for (const [id, { total, found }] of parts) {
    const version = Number(id.split("/")[0]);
    if (checkpoints.has(version) || found.size !== total) continue;
    checkpoints.set(
      version,
      Array.from({ length: total }, (_, i) => found.get(i + 1) as ObjectInfo),
    );
  }
  return { commits, checkpoints, v2Checkpoints };
}

/** `_last_checkpoint`, or undefined when it is missing or unreadable (it is only a hint). */
export async function readLastCheckpoint(store: ObjectStore): Promise<LastCheckpoint | undefined> {
  try {
    const text = await readText(store, LAST_CHECKPOINT_KEY);
    const json = JSON.parse(text) as LastCheckpoint;
    return typeof json.version === "number" ? json : undefined;
  } catch (err) {
    if (err instanceof StoreError && err.code === "not_found") return undefined;
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** A small object as UTF-8 text. */
export async function readText(store: ObjectStore, key: string): Promise<string> {
  return (await readAll(await store.read(key))).toString("utf8");
}
