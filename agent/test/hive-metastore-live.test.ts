/**
 * The Hive Metastore client against a real metastore, read only; runs only when
 * `LAKESMITH_LIVE_HMS_URI` (`thrift://host:9083`) is set, with `LAKESMITH_LIVE_HMS_USER` and
 * `LAKESMITH_LIVE_HMS_PASSWORD` for a SASL PLAIN login and `LAKESMITH_LIVE_HMS_TRANSPORT=framed`
 * where the metastore frames its transport (see the agent README).
 */
import { describe, expect, it } from "vitest";
import { HiveCatalog } from "../src/catalogs/hive/catalog.ts";
import { HiveMetastoreClient } from "../src/catalogs/hive/client.ts";

const env = process.env;
const uri = env.LAKESMITH_LIVE_HMS_URI;
const login = {
  ...(env.LAKESMITH_LIVE_HMS_USER ? { username: env.LAKESMITH_LIVE_HMS_USER } : {}),
  ...(env.LAKESMITH_LIVE_HMS_PASSWORD ? { password: env.LAKESMITH_LIVE_HMS_PASSWORD } : {}),
};
const transport = env.LAKESMITH_LIVE_HMS_TRANSPORT === "framed" ? "framed" : "buffered";

describe.skipIf(!uri)("a live Hive Metastore", () => {
  it("lists databases and reads the first database's tables and partitions", async () => {
    const client = await HiveMetastoreClient.connect({ uri: uri as string, transport, ...login });
    try {
      const databases = await client.getAllDatabases();
      expect(databases.length).toBeGreaterThan(0);
      const db = databases[0] as string;
      const names = (await client.getAllTables(db)).slice(0, 10);
      const tables = await client.getTableObjectsByName(db, names);
      expect(tables.map((t) => t.tableName).sort()).toEqual([...names].sort());
      const partitioned = tables.find((t) => t.partitionKeys.length > 0);
      if (partitioned)
        for await (const batch of client.partitionBatches(db, partitioned.tableName, 10)) {
          expect(batch[0]?.values.length).toBe(partitioned.partitionKeys.length);
          break;
        }
      await expect(client.getTable(db, "lakesmith_no_such_table_x")).rejects.toMatchObject({
        type: "NoSuchObjectException",
      });
    } finally {
      client.close();
    }
  });

  it.skipIf(transport === "framed")("answers catalog_test's question: the one catalog, hive", async () => {
    const catalog = new HiveCatalog(
      { type: "hive_metastore", metastore_uri: uri as string, ...login },
      async () => ({ size_bytes: null, note: "not read in the live test" }),
    );
    expect(await catalog.listCatalogs()).toEqual(["hive"]);
  });
});
