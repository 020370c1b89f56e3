/**
 * The metastore a Hive job's catalog reference names (`catalogs/hive/client.ts` speaks its Thrift
 * protocol). Records are the metastore's own objects, changed in place and written back whole, so
 * a location swap keeps every field it does not change.
 */
import type { HiveMetastoreTableRef } from "@lakesmith/shared/jobs";
import { HiveMetastoreClient } from "../catalogs/hive/client.ts";

export type {
  HiveMetastoreClient as HiveMetastore,
  HivePartition,
  HiveTable as HiveTableRecord,
} from "../catalogs/hive/client.ts";

/** A connection to the metastore of `ref`; close it when done. */
export function openMetastore(ref: HiveMetastoreTableRef): Promise<HiveMetastoreClient> {
  return HiveMetastoreClient.connect({
    uri: ref.uri,
    ...(ref.username ? { username: ref.username } : {}),
    ...(ref.password ? { password: ref.password } : {}),
    ...(ref.transport ? { transport: ref.transport } : {}),
  });
}
