import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HiveMetastoreClient, hiveTypes } from "../src/catalogs/hive/client.ts";
import { HiveMetastoreError, isNoSuchObject } from "../src/catalogs/hive/errors.ts";
import type { HiveIdl } from "../src/catalogs/hive/idl.ts";
import { HiveMetastoreServer } from "./support/hive-metastore.ts";

const PASSWORD = "hms-pa55-3c1d-never-printed";
const USER = "lake";

let metastore: HiveMetastoreServer | undefined;
const clients: HiveMetastoreClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await metastore?.stop();
  metastore = undefined;
});

async function open(
  server: HiveMetastoreServer,
  options: Partial<Parameters<typeof HiveMetastoreClient.connect>[0]> = {},
): Promise<HiveMetastoreClient> {
  const client = await HiveMetastoreClient.connect({ uri: server.uri, timeoutMs: 5000, ...options });
  clients.push(client);
  return client;
}

function salesTable(server: HiveMetastoreServer): void {
  server.registerParquetTable(
    {
      db: "sales",
      name: "orders",
      location: "s3://bucket/warehouse/orders",
      partitionKeys: [{ name: "day", type: "string" }],
    },
    [
      { values: ["2026-01-01"], totalSize: 1000 },
      { values: ["2026-01-02"], totalSize: 2000 },
    ],
  );
  server.registerTextTable({ db: "sales", name: "raw", location: "file:///data/raw" });
}

async function rejection(promise: Promise<unknown>): Promise<HiveMetastoreError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HiveMetastoreError);
  return err as HiveMetastoreError;
}

describe.each([
  { transport: "buffered", sasl: false },
  { transport: "framed", sasl: false },
  { transport: "buffered", sasl: true },
  { transport: "framed", sasl: true },
] as const)(
  "the client against the metastore over $transport transport, SASL $sasl",
  ({ transport, sasl }) => {
    const login = { username: USER, password: PASSWORD };
    const credentials = sasl ? login : {};
    async function salesMetastore(): Promise<HiveMetastoreClient> {
      metastore = await HiveMetastoreServer.start({ transport, ...(sasl ? { sasl: login } : {}) });
      salesTable(metastore);
      return open(metastore, { transport, ...credentials });
    }

    it("lists databases, tables and partitions and reads them", async () => {
      const client = await salesMetastore();

      expect(await client.getAllDatabases()).toEqual(["sales"]);
      expect((await client.getAllTables("sales")).sort()).toEqual(["orders", "raw"]);
      const orders = await client.getTable("sales", "orders");
      expect(orders.sd.location).toBe("s3://bucket/warehouse/orders");
      expect(orders.sd.inputFormat).toBe("org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat");
      expect(orders.partitionKeys.map((k) => k.name)).toEqual(["day"]);
      const found = await client.getTableObjectsByName("sales", ["raw", "gone", "orders"]);
      expect(found.map((t) => t.tableName)).toEqual(["raw", "orders"]);
      const names = await client.listPartitionNames("sales", "orders");
      expect(names).toEqual(["day=2026-01-01", "day=2026-01-02"]);
      const parts = await client.getPartitionsByNames("sales", "orders", names);
      expect(parts.map((p) => [p.sd.location, p.parameters.totalSize])).toEqual([
        ["s3://bucket/warehouse/orders/day=2026-01-01", "1000"],
        ["s3://bucket/warehouse/orders/day=2026-01-02", "2000"],
      ]);
      // Concurrent calls on one connection each get their own answer.
      const [a, b] = await Promise.all([
        client.getPartition("sales", "orders", ["2026-01-02"]),
        client.getTable("sales", "raw"),
      ]);
      expect(a.values).toEqual(["2026-01-02"]);
      expect(b.tableName).toBe("raw");
    });

    it("alters a partition's location and a table's parameters, read back on a new connection", async () => {
      const client = await salesMetastore();
      const partition = await client.getPartition("sales", "orders", ["2026-01-01"]);
      partition.sd.location = "s3://bucket/warehouse/orders/day=2026-01-01-v2";
      await client.alterPartition("sales", "orders", partition);
      const table = await client.getTable("sales", "raw");
      table.parameters.owner_note = "moved";
      await client.alterTable("sales", "raw", table);

      const again = await open(metastore as HiveMetastoreServer, { transport, ...credentials });
      const read = await again.getPartition("sales", "orders", ["2026-01-01"]);
      expect(read.sd.location).toBe("s3://bucket/warehouse/orders/day=2026-01-01-v2");
      expect((await again.getTable("sales", "raw")).parameters.owner_note).toBe("moved");
      expect(metastore?.callsOf("alter_partition")).toHaveLength(1);
    });

    it("alters several partitions in one call, all or none", async () => {
      const client = await salesMetastore();
      const names = await client.listPartitionNames("sales", "orders");
      const parts = await client.getPartitionsByNames("sales", "orders", names);
      for (const p of parts) p.sd.location = `${p.sd.location}-v2`;
      const ghost = { ...(parts[0] as HiveIdl.Partition), values: ["2030-01-01"] } as HiveIdl.Partition;
      const err = await rejection(client.alterPartitions("sales", "orders", [...parts, ghost]));
      expect(err.type).toBe("InvalidOperationException");
      const unchanged = await client.getPartitionsByNames("sales", "orders", names);
      expect(unchanged.map((p) => p.sd.location.endsWith("-v2"))).toEqual([false, false]);
      await client.alterPartitions("sales", "orders", parts);
      const moved = await client.getPartitionsByNames("sales", "orders", names);
      expect(moved.map((p) => p.sd.location)).toEqual([
        "s3://bucket/warehouse/orders/day=2026-01-01-v2",
        "s3://bucket/warehouse/orders/day=2026-01-02-v2",
      ]);
    });

    it("answers a missing table with the metastore's NoSuchObjectException and its message", async () => {
      const client = await salesMetastore();
      const err = await rejection(client.getTable("sales", "nope"));
      expect(err.reason).toBe("metastore");
      expect(err.type).toBe("NoSuchObjectException");
      expect(isNoSuchObject(err)).toBe(true);
      expect(err.message).toBe(
        `Hive Metastore ${metastore?.uri}: get_table: NoSuchObjectException: sales.nope table not found`,
      );
      // The connection stays usable after a metastore exception.
      expect(await client.getAllDatabases()).toEqual(["sales"]);
    });
  },
);

describe("SASL PLAIN login", () => {
  it("refuses a wrong password in the negotiation, naming the user and the metastore's reason, never the password", async () => {
    metastore = await HiveMetastoreServer.start({ sasl: { username: USER, password: PASSWORD } });
    const err = await rejection(
      HiveMetastoreClient.connect({ uri: metastore.uri, username: USER, password: `${PASSWORD}-wrong` }),
    );
    expect(err.reason).toBe("refused");
    expect(err.message).toBe(
      `Hive Metastore ${metastore.uri} refused the SASL PLAIN login of user '${USER}': Error validating the login`,
    );
    expect(err.message).not.toContain(PASSWORD);
    expect(metastore.calls).toEqual([]);
  });

  it("fails clearly, without hanging, when a client logs in to a metastore without SASL", async () => {
    metastore = await HiveMetastoreServer.start();
    const err = await rejection(
      HiveMetastoreClient.connect({ uri: metastore.uri, username: USER, password: PASSWORD, timeoutMs: 300 }),
    );
    expect(err.reason).toBe("timeout");
    expect(err.message).toBe(`Hive Metastore ${metastore.uri}: no answer to the login within 300 ms`);
  });

  it("fails clearly, without hanging, when a client without a login meets a SASL metastore", async () => {
    metastore = await HiveMetastoreServer.start({ sasl: { username: USER, password: PASSWORD } });
    const client = await open(metastore, { timeoutMs: 2000 });
    const err = await rejection(client.getAllDatabases());
    expect(["protocol", "network"]).toContain(err.reason);
    expect(metastore.calls).toEqual([]);
  });
});

describe("connection failures", () => {
  it("names a refused connection", async () => {
    const port = await freePort();
    const err = await rejection(HiveMetastoreClient.connect({ uri: `thrift://127.0.0.1:${port}` }));
    expect(err.reason).toBe("network");
    expect(err.message).toBe(
      `Hive Metastore thrift://127.0.0.1:${port}: cannot connect (connection refused)`,
    );
  });

  it("times out a call the metastore does not answer, and fails the calls after it", async () => {
    metastore = await HiveMetastoreServer.start();
    metastore.before("get_all_databases", () => new Promise(() => undefined));
    const client = await open(metastore, { timeoutMs: 200 });
    const err = await rejection(client.getAllDatabases());
    expect(err.reason).toBe("timeout");
    expect(err.message).toBe(`Hive Metastore ${metastore.uri}: get_all_databases: no answer within 200 ms`);
    expect((await rejection(client.getAllTables("x"))).reason).toBe("timeout");
  });

  it("rejects a URI that is not thrift://host:port", async () => {
    const err = await rejection(HiveMetastoreClient.connect({ uri: "http://metastore:9083" }));
    expect(err.message).toBe("not a thrift://host:port URI: http://metastore:9083");
  });
});

describe("locks", () => {
  async function lockedTable(): Promise<[HiveMetastoreClient, HiveMetastoreClient]> {
    metastore = await HiveMetastoreServer.start();
    salesTable(metastore);
    return [await open(metastore), await open(metastore)];
  }

  it("makes a second EXCLUSIVE lock wait until the first is released", async () => {
    const [a, b] = await lockedTable();
    const order: string[] = [];
    let releaseA!: () => void;
    const aHeld = a.withTableLock(
      { db: "sales", table: "orders", exclusive: true, waitMs: 1000 },
      async () => {
        order.push("a locked");
        await new Promise<void>((resolve) => {
          releaseA = resolve;
        });
        order.push("a done");
      },
    );
    await expect.poll(() => order).toEqual(["a locked"]);

    const direct = await b.lock({ db: "sales", table: "orders" }, "EXCLUSIVE");
    expect(direct.state).toBe("WAITING");
    await b.unlock(direct.lockId);

    const bHeld = b.withTableLock(
      { db: "sales", table: "orders", exclusive: true, waitMs: 5000 },
      async () => {
        order.push("b locked");
      },
    );
    await expect.poll(() => metastore?.callsOf("check_lock").length ?? 0).toBeGreaterThan(0);
    expect(order).toEqual(["a locked"]);
    releaseA();
    await Promise.all([aHeld, bHeld]);
    expect(order).toEqual(["a locked", "a done", "b locked"]);
    expect(metastore?.locks.size).toBe(0);
  });

  it("gives up after waitMs with an error naming the table, and withdraws the waiting request", async () => {
    const [a, b] = await lockedTable();
    const held = await a.lock({ db: "sales", table: "orders" }, "EXCLUSIVE");
    expect(held.state).toBe("ACQUIRED");
    let ran = false;
    const err = await rejection(
      b.withTableLock({ db: "sales", table: "orders", exclusive: true, waitMs: 150 }, async () => {
        ran = true;
      }),
    );
    expect(ran).toBe(false);
    expect(err.reason).toBe("locked");
    expect(err.message).toMatch(
      /sales\.orders is locked by another writer; lock \d+ still WAITING after 150 ms/,
    );
    expect([...(metastore?.locks.keys() ?? [])]).toEqual([held.lockId]);
  });

  it("locks partitions apart: another partition is free, the whole table is not", async () => {
    const [a, b] = await lockedTable();
    await a.lock({ db: "sales", table: "orders", partition: "day=2026-01-01" }, "EXCLUSIVE");
    expect(
      (await b.lock({ db: "sales", table: "orders", partition: "day=2026-01-02" }, "EXCLUSIVE")).state,
    ).toBe("ACQUIRED");
    expect((await b.lock({ db: "sales", table: "orders" }, "SHARED_WRITE")).state).toBe("WAITING");
    expect((await b.lock({ db: "sales", table: "raw" }, "EXCLUSIVE")).state).toBe("ACQUIRED");
  });

  it("unlocks when the function throws, and passes its error on", async () => {
    const [a] = await lockedTable();
    const err = await a
      .withTableLock({ db: "sales", table: "orders", exclusive: true, waitMs: 1000 }, async () => {
        throw new Error("swap refused: a file appeared");
      })
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe("swap refused: a file appeared");
    expect(metastore?.locks.size).toBe(0);
    expect(metastore?.callsOf("unlock")).toHaveLength(1);
  });

  it("keeps a held lock past the metastore's lock timeout by heartbeating; an unheard one lapses", async () => {
    metastore = await HiveMetastoreServer.start({ lockTimeoutMs: 500 });
    salesTable(metastore);
    const [a, b] = [await open(metastore), await open(metastore)];
    await a.withTableLock(
      { db: "sales", table: "orders", exclusive: true, waitMs: 1000, heartbeatMs: 40 },
      async ({ lockId, signal }) => {
        await new Promise((resolve) => setTimeout(resolve, 1200));
        const other = await b.lock({ db: "sales", table: "orders" }, "EXCLUSIVE");
        expect(other.state).toBe("WAITING");
        expect(signal.aborted).toBe(false);
        expect(metastore?.locks.has(lockId)).toBe(true);
        await b.unlock(other.lockId);
      },
    );
    const idle = await a.lock({ db: "sales", table: "raw" }, "EXCLUSIVE");
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await b.lock({ db: "sales", table: "raw" }, "EXCLUSIVE")).state).toBe("ACQUIRED");
    expect((await rejection(a.heartbeat(idle.lockId))).type).toBe("NoSuchLockException");
  });

  it("heartbeats while held, and aborts the signal when the metastore no longer knows the lock", async () => {
    const [a] = await lockedTable();
    const signalled = await a.withTableLock(
      { db: "sales", table: "orders", exclusive: false, waitMs: 1000, heartbeatMs: 30 },
      async ({ lockId, signal }) => {
        await expect.poll(() => metastore?.callsOf("heartbeat").length ?? 0).toBeGreaterThanOrEqual(2);
        expect(signal.aborted).toBe(false);
        metastore?.locks.delete(lockId); // the metastore timed it out
        await expect.poll(() => signal.aborted).toBe(true);
        return (signal.reason as HiveMetastoreError).type;
      },
    );
    expect(signalled).toBe("NoSuchLockException");
    const lock = metastore?.callsOf("lock")[0]?.[0] as HiveIdl.LockRequest;
    expect(lock.component[0]?.type).toBe(hiveTypes.LockType.SHARED_WRITE);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
