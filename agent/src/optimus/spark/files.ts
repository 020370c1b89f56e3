/**
 * Which objects make up the Spark event logs under a prefix, in reading order. Spark writes either one
 * file per application (`app-…[.codec]`, `.inprogress` while running) or, with rolling on, a folder
 * `eventlog_v2_<appid>/` of `events_<n>_<appid>[.codec]` parts plus an `appstatus_*` marker. Parts are
 * read by their number `n` (not by key order: `events_10_` sorts before `events_2_`); markers, Spark's
 * temporary and checksum files are skipped.
 */
import type { ObjectInfo, ObjectStore } from "../../store/index.ts";

/** One application's log: the keys of its parts, in order. */
export interface SparkLog {
  /** The file's key, or the rolling folder's key (ending with `/`). */
  key: string;
  parts: ObjectInfo[];
}

const PART = /^events_(\d+)_/;

/** The event logs under `prefix` (a folder, a file's key, or any key prefix), grouped by application. */
export async function* sparkLogs(store: ObjectStore, prefix = ""): AsyncIterable<SparkLog> {
  const rolling = new Map<string, { n: number; info: ObjectInfo }[]>();
  for await (const info of store.list(prefix)) {
    const slash = info.key.lastIndexOf("/");
    const name = info.key.slice(slash + 1);
    const folder = info.key.slice(0, slash + 1);
    if (skipped(name)) continue;
    const part = PART.exec(name);
    const parent = folder.slice(0, -1).split("/").pop() ?? "";
    if (part && parent.startsWith("eventlog_v2_")) {
      const parts = rolling.get(folder) ?? [];
      parts.push({ n: Number(part[1]), info });
      rolling.set(folder, parts);
      continue;
    }
    if (!parent.startsWith("eventlog_v2_")) yield { key: info.key, parts: [info] };
  }
  for (const [key, parts] of rolling) {
    parts.sort((a, b) => a.n - b.n);
    yield { key, parts: parts.map((p) => p.info) };
  }
}

function skipped(name: string): boolean {
  return name.startsWith(".") || name.startsWith("appstatus_") || name.endsWith(".crc") || name === "";
}
