/**
 * Iceberg tables registered in a Hive Metastore, as Iceberg's HiveCatalog keeps them: a table
 * whose parameters say `table_type=ICEBERG` and name the current metadata file in
 * `metadata_location`.
 *
 * A commit writes the next metadata file (`NNNNN-<uuid>.metadata.json`, the catalog's naming, the
 * number one past the current file's, written only if absent) and then, under the metastore's
 * exclusive lock on the table, compares and swaps: the table's `metadata_location` must still be
 * the file the change was planned against (else another writer won: nothing is swapped, and the
 * caller reloads and re-plans); it becomes the new file, and `previous_metadata_location` the old
 * one. The new file keeps the spelling of the old location (`s3a://...` stays `s3a`). Files
 * written for a commit that lost stay unreferenced, for vacuum's orphan pass.
 */
import { randomUUID } from "node:crypto";
import type { HiveMetastoreTableRef } from "@lakesmith/shared/jobs";
import { canonicalLocation, keyOfLocation } from "../hive/location.ts";
import { openMetastore } from "../hive/metastore.ts";
import { prepareSnapshot } from "../iceberg/commit.ts";
import {
  IcebergError,
  loadIcebergTable,
  METADATA_DIR,
  metadataFileNumber,
  stringifyJson,
} from "../iceberg/index.ts";
import { JobError } from "../registry.ts";
import type { IcebergCatalog } from "./iceberg-catalog.ts";

export const METADATA_LOCATION = "metadata_location";
export const PREVIOUS_METADATA_LOCATION = "previous_metadata_location";

export function metastoreCatalog(ref: HiveMetastoreTableRef): IcebergCatalog {
  const name = `${ref.database}.${ref.table}`;
  /** The `metadata_location` each loaded table was read from, by its metadata key. */
  const loadedFrom = new Map<string, string>();
  return {
    async load(store) {
      const metastore = await openMetastore(ref);
      let location: string;
      try {
        const table = await metastore.getTable(ref.database, ref.table);
        if ((table.parameters.table_type ?? "").toUpperCase() !== "ICEBERG")
          throw new JobError(
            `${name} is not an Iceberg table in the metastore (table_type ${table.parameters.table_type ?? "unset"}); onboard it with format hive`,
            { retryable: false },
          );
        const at = table.parameters[METADATA_LOCATION];
        if (!at)
          throw new IcebergError("not_a_table", `the metastore names no ${METADATA_LOCATION} for ${name}`);
        location = at;
      } finally {
        metastore.close();
      }
      // As a key: a metastore may spell the location file:/... or s3a://...
      const key = keyOfLocation(store.uri, location);
      if (key === null)
        throw new IcebergError(
          "not_a_table",
          `the metastore's ${METADATA_LOCATION} ${location} is not under the table's root ${store.uri}`,
        );
      const metadata = await loadIcebergTable(store, { metadataLocation: key });
      loadedFrom.set(metadata.metadataKey, location);
      return metadata;
    },

    async commit(store, table, change) {
      const planned = loadedFrom.get(table.metadataKey);
      if (!planned) throw new Error(`${table.metadataKey} was not loaded through the metastore`);
      const prepared = await prepareSnapshot(store, table, change);
      const fileName = `${String(nextNumber(table.metadataKey)).padStart(5, "0")}-${randomUUID()}.metadata.json`;
      const written = await store.writeIfAbsent(
        `${METADATA_DIR}${fileName}`,
        stringifyJson(prepared.metadata, 2),
      );
      if (!written.written) return { committed: false, message: `${fileName} exists already` };
      const location = `${planned.slice(0, planned.lastIndexOf("/") + 1)}${fileName}`;

      const metastore = await openMetastore(ref);
      try {
        const { database: db, table: tableName } = ref;
        return await metastore.withTableLock({ db, table: tableName, exclusive: true }, async () => {
          const current = await metastore.getTable(db, tableName);
          const now = current.parameters[METADATA_LOCATION] ?? "";
          if (canonicalLocation(now) !== canonicalLocation(planned))
            return { committed: false as const, message: `another writer committed ${now} first` };
          current.parameters = {
            ...current.parameters,
            [METADATA_LOCATION]: location,
            [PREVIOUS_METADATA_LOCATION]: planned,
          };
          await metastore.alterTable(db, tableName, current);
          return { committed: true as const };
        });
      } finally {
        metastore.close();
      }
    },
  };
}

/** One past the number the current metadata file's name carries (`00003-<uuid>` or `v3`); 1 when none. */
function nextNumber(metadataKey: string): number {
  return (metadataFileNumber(metadataKey.slice(metadataKey.lastIndexOf("/") + 1)) ?? 0) + 1;
}
