/**
 * What discovery counts as claimed inside a location: the location keys of registered tables
 * (`tables.location_key`) and of live synced catalog tables (their location as a table's URI would
 * be, `s3a://` read as `s3://`, made canonical) that lie within it. Every object under one is grouped into that table's prefix,
 * which is filtered out as `claimed`.
 */
import { locationKey, parseLocation, tryLocationKey } from "@lakesmith/shared/locations";
import { and, isNotNull, isNull, sql } from "drizzle-orm";
import { storageUri } from "../../catalog-connections/table-ref.ts";
import type { Db } from "../../db/index.ts";
import { catalogTables, lakeTables } from "../../db/schema.ts";

/** The claimed location keys within `uri`, sorted. */
export async function claimedKeys(db: Db, uri: string): Promise<string[]> {
  const base = locationKey(uri);
  const registered = await db
    .select({ key: lakeTables.locationKey })
    .from(lakeTables)
    .where(sql`substr(${lakeTables.locationKey}, 1, ${base.length}) = ${base}`);
  // Synced locations are spelled as their catalog has them (`s3a://`): narrowed by the bucket and
  // path in SQL, compared canonically here.
  const parsed = parseLocation(uri);
  const needle = [parsed.root, ...parsed.segments].filter((s) => s !== "").join("/");
  const synced = await db
    .select({ location: catalogTables.location })
    .from(catalogTables)
    .where(
      and(
        isNull(catalogTables.deletedAt),
        isNotNull(catalogTables.location),
        sql`instr(${catalogTables.location}, ${needle}) > 0`,
      ),
    );
  const keys = new Set<string>();
  for (const r of registered) if (r.key) keys.add(r.key);
  for (const s of synced) {
    const key = s.location ? tryLocationKey(storageUri(s.location)) : undefined;
    if (key?.startsWith(base)) keys.add(key);
  }
  return [...keys].sort();
}
