/**
 * Maps a logged scan to one of the run's tables (`OptimusTableRef`), by location first, then by name.
 *
 * - Location: a scan location lies under a table's uri when it is the uri or below it, compared as
 *   the shared location keys (`locationKey`: `gcs://` is `gs://`, ABFS is `azure://`, the bucket
 *   case-insensitive, paths case-sensitive, trailing slashes no matter), after Hadoop's `s3a://`
 *   and `s3n://` are read as `s3://` and Spark's `file:/p` as `file:///p`. The deepest table root
 *   wins (a table nested under another's root is the nested one's).
 * - Name: the engine's name (backticks and double quotes dropped) compared case-insensitively with
 *   the fqn or one of `names`; else its last 2 parts with the fqn's last 2 (or the last part where
 *   either has one part), only when exactly one table matches: an ambiguous short name maps to none.
 * - Lookups are maps (a location walks up its own path), so a scan costs its path depth, not the
 *   number of tables.
 */
import { tryLocationKey } from "@lakesmith/shared/locations";
import type { OptimusTableRef } from "@lakesmith/shared/optimus";
import type { LoggedScan } from "../query.ts";

/** A location as the key table roots and scan locations are compared by (ends with `/`). */
export function normalizeLocation(location: string): string {
  const spelled = location
    .trim()
    .replace(/^s3[an]:\/\//i, "s3://")
    .replace(/^file:(?=\/(?!\/))/i, "file://");
  return tryLocationKey(spelled) ?? `${spelled.replace(/\/+$/, "")}/`;
}

const nameParts = (name: string): string[] => name.replace(/[`"]/g, "").toLowerCase().split(".");

const lastParts = (parts: string[], n: number): string => parts.slice(-n).join(".");

export class TableMatcher {
  private readonly byRoot = new Map<string, OptimusTableRef>();
  private readonly byName = new Map<string, OptimusTableRef>();
  /** fqn's last 2 parts → tables whose fqn has at least 2 parts. */
  private readonly byLast2 = new Map<string, OptimusTableRef[]>();
  /** fqn's last part → every table. */
  private readonly byLast1 = new Map<string, OptimusTableRef[]>();

  constructor(tables: readonly OptimusTableRef[]) {
    for (const table of tables) {
      for (const uri of table.uris) this.byRoot.set(normalizeLocation(uri), table);
      for (const name of [table.table_fqn, ...table.names]) this.byName.set(nameParts(name).join("."), table);
      const parts = nameParts(table.table_fqn);
      if (parts.length >= 2) push(this.byLast2, lastParts(parts, 2), table);
      push(this.byLast1, lastParts(parts, 1), table);
    }
  }

  /** The table a scan read, or undefined when none of the run's tables is it. */
  match(scan: Pick<LoggedScan, "table" | "locations">): OptimusTableRef | undefined {
    for (const location of scan.locations) {
      const table = this.byLocation(location);
      if (table) return table;
    }
    return scan.table === undefined ? undefined : this.byEngineName(scan.table);
  }

  private byLocation(location: string): OptimusTableRef | undefined {
    let key = normalizeLocation(location);
    const floor = key.indexOf("://") + 3;
    for (;;) {
      const table = this.byRoot.get(key);
      if (table) return table;
      const cut = key.lastIndexOf("/", key.length - 2);
      if (cut < floor) return undefined;
      key = key.slice(0, cut + 1);
    }
  }

  private byEngineName(name: string): OptimusTableRef | undefined {
    const parts = nameParts(name);
    const exact = this.byName.get(parts.join("."));
    if (exact) return exact;
    const last1 = this.byLast1.get(lastParts(parts, 1)) ?? [];
    const candidates =
      parts.length >= 2
        ? [
            ...(this.byLast2.get(lastParts(parts, 2)) ?? []),
            ...last1.filter((t) => nameParts(t.table_fqn).length === 1),
          ]
        : last1;
    const distinct = new Set(candidates);
    return distinct.size === 1 ? candidates[0] : undefined;
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
