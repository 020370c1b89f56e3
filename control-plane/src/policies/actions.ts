/**
 * The actions of document 2 (policies name them; `.../tables/{t}/actions` triggers them) and which
 * tables can take each: one declaration that policy validation, the actions list and the engine
 * all read.
 *
 * | action             | job                                   | tables                                        |
 * | ------------------ | ------------------------------------- | --------------------------------------------- |
 * | `compress`         | crunch (recompress, tuned codec)      | Delta, Iceberg, Hive (Parquet)                |
 * | `compact`          | optimize (merge small files, no sort) | Delta, Iceberg, Hive (Parquet)                |
 * | `improve_layout`   | crunch with a linear sort or Z-order  | Delta, Iceberg, Hive (Parquet)                |
 * | `expire_snapshots` | vacuum (snapshot expiry + tombstones) | Delta; Iceberg registered by URI              |
 * | `expire_partitions`| partition expiration                  | partitioned Delta                             |
 *
 * Iceberg tables committed through a catalog (Polaris, Hive Metastore) expire snapshots through that
 * catalog, which the agent does not do yet; Hive tables have no log saying which files no snapshot
 * needs. Partition expiration commits removes to a Delta log.
 */
export const ACTIONS = [
  "compress",
  "compact",
  "improve_layout",
  "expire_snapshots",
  "expire_partitions",
] as const;
export type Action = (typeof ACTIONS)[number];

/** Actions that delete data (files leave the table): never implied, always named. */
export const DESTRUCTIVE_ACTIONS: readonly Action[] = ["expire_snapshots", "expire_partitions"];

/** Actions that rewrite data files; one rewrite job per slot carries all of them. */
export const REWRITE_ACTIONS: readonly Action[] = ["compress", "compact", "improve_layout"];

/** What decides the actions a table can take, known before it is onboarded (from its catalog record). */
export interface ActionFacts {
  /** Lower-case format: `delta`, `iceberg`, `hive`, `parquet` (a Hive Metastore Parquet table), other, or null. */
  format: string | null;
  /** Committed through a catalog (Iceberg REST, Hive Metastore) rather than its own log. */
  catalogCommitted: boolean;
  /** Null when the catalog does not say. */
  partitioned: boolean | null;
}

/** Why `action` can't run on a table with `facts`; undefined when it can. */
export function unsupportedReason(action: Action, facts: ActionFacts): string | undefined {
  const format = normalFormat(facts.format);
  if (format === undefined)
    return `${facts.format ?? "a table of unknown format"} tables can't be rewritten or expired; Delta, Iceberg and Hive (Parquet) tables can`;
  switch (action) {
    case "compress":
    case "compact":
    case "improve_layout":
      return undefined;
    case "expire_snapshots":
      if (format === "hive")
        return "a Hive table has no log saying which files no snapshot needs (a Hive crunch's old folders become pending deletions on their own)";
      if (format === "iceberg" && facts.catalogCommitted)
        return "an Iceberg table committed through its catalog expires snapshots through that catalog, which is not supported yet";
      return undefined;
    case "expire_partitions":
      if (format !== "delta")
        return `partition expiration commits removes to a Delta log; this is a ${format} table`;
      if (facts.partitioned === false) return "the table is not partitioned";
      return undefined;
  }
}

/** The actions a table with `facts` can take, in `ACTIONS` order. */
export function supportedActions(facts: ActionFacts): Action[] {
  return ACTIONS.filter((a) => unsupportedReason(a, facts) === undefined);
}

function normalFormat(format: string | null): "delta" | "iceberg" | "hive" | undefined {
  switch (format?.toLowerCase()) {
    case "delta":
      return "delta";
    case "iceberg":
      return "iceberg";
    case "hive":
    case "parquet":
      return "hive";
    default:
      return undefined;
  }
}
