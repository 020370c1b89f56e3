/**
 * A loopback Hive Metastore for tests: a real Thrift server (npm `thrift`'s `createServer` with the
 * `ThriftHiveMetastore.Processor` generated from the metastore IDL) over buffered or framed
 * transport, optionally behind SASL PLAIN, holding databases, tables and partitions in memory.
 *
 * - Answers as a metastore does: `NoSuchObjectException` for a missing table or partition,
 *   `InvalidOperationException` for altering one, `UnknownDBException` for a missing database in
 *   `get_table_objects_by_name` (whose missing tables are left out). Alters persist and set
 *   `transient_lastDdlTime` when the new object has none; `alter_table` renames.
 * - Locks as the lock manager grants them without transactions: a lock waits while an earlier lock
 *   (held or waiting) on an overlapping object conflicts (EXCLUSIVE with any; SHARED_WRITE with
 *   SHARED_WRITE and EXCLUSIVE; SHARED_READ with EXCLUSIVE); `check_lock` re-checks and grants;
 *   `unlock` releases; an unknown lock id is `NoSuchLockException`. With `lockTimeoutMs`, a lock
 *   not heard of for that long is dropped, as the metastore's `hive.txn.timeout` does.
 * - A wrong SASL user or password is refused in the negotiation (BAD, "Error validating the
 *   login") and the connection closed, before any call.
 * - `calls` logs every call (method and arguments); `before(method, fn)` runs `fn` before that
 *   method is served (tests use it to change the metastore under a running job).
 */
import { createRequire } from "node:module";
import type { AddressInfo, Server, Socket } from "node:net";
import { Duplex } from "node:stream";
import thrift from "thrift";
import type { HiveIdl, ThriftHiveMetastoreTypes } from "../../src/catalogs/hive/idl.ts";
import {
  dataFrame,
  FrameReader,
  negotiationMessage,
  parsePlainResponse,
  SaslStatus,
} from "../../src/catalogs/hive/sasl.ts";

/**
 * The generated processor checks a handler's error with `instanceof` against the types module it
 * `require`s; the test runner would hand an `import` of it a transpiled copy whose exceptions fail
 * that check. Both are taken from Node's `require` here, so they are the processor's own.
 */
const require = createRequire(import.meta.url);
const ttypes: typeof HiveIdl = require("../../src/catalogs/hive/gen/hive_metastore_types.js");
const ThriftHiveMetastore: typeof ThriftHiveMetastoreTypes = require("../../src/catalogs/hive/gen/ThriftHiveMetastore.js");

export const PARQUET_FORMAT = {
  inputFormat: "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
  outputFormat: "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
  serde: "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
};
export const TEXT_FORMAT = {
  inputFormat: "org.apache.hadoop.mapred.TextInputFormat",
  outputFormat: "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
  serde: "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
};
export const ICEBERG_FORMAT = {
  inputFormat: "org.apache.iceberg.mr.hive.HiveIcebergInputFormat",
  outputFormat: "org.apache.iceberg.mr.hive.HiveIcebergOutputFormat",
  serde: "org.apache.iceberg.mr.hive.HiveIcebergSerDe",
};

export interface HiveMetastoreServerOptions {
  transport?: "buffered" | "framed";
  /** Require a SASL PLAIN login with these credentials. */
  sasl?: { username: string; password: string };
  /** Drop a lock not heard of (lock, check_lock, heartbeat) for this long, as `hive.txn.timeout`. */
  lockTimeoutMs?: number;
}

export interface Column {
  name: string;
  type: string;
}

export interface TableSpec {
  db: string;
  name: string;
  location: string;
  columns?: Column[];
  partitionKeys?: Column[];
  /** `totalSize` of the table, as a table parameter. */
  totalSize?: number;
  tableType?: "EXTERNAL_TABLE" | "MANAGED_TABLE" | "VIRTUAL_VIEW";
  parameters?: Record<string, string>;
  /** `transient_lastDdlTime`, seconds. Default: now. */
  ddlTime?: number;
}

export interface PartitionSpec {
  values: string[];
  /** Default `<table location>/<k1=v1/k2=v2>`. */
  location?: string;
  totalSize?: number;
}

interface HeldLock {
  id: number;
  type: number;
  db: string;
  table: string | undefined;
  partition: string | undefined;
  state: "ACQUIRED" | "WAITING";
  lastHeartbeat: number;
}

type Hook = (args: unknown[]) => void | Promise<void>;

const DEFAULT_COLUMNS: Column[] = [
  { name: "id", type: "bigint" },
  { name: "name", type: "string" },
];

export class HiveMetastoreServer {
  readonly calls: { method: string; args: unknown[] }[] = [];
  readonly databases = new Map<string, HiveIdl.Database>();
  /** `db.table` to the table and its partitions by name (`k1=v1/k2=v2`). */
  readonly tables = new Map<string, { table: HiveIdl.Table; partitions: Map<string, HiveIdl.Partition> }>();
  readonly locks = new Map<number, HeldLock>();
  /** Errors the Thrift server reported (a connection it could not read). */
  readonly errors: Error[] = [];
  private readonly hooks = new Map<string, Hook[]>();
  private readonly sockets = new Set<Socket>();
  private nextLockId = 1;
  uri = "";

  private constructor(
    private readonly server: Server,
    private readonly lockTimeoutMs: number | undefined,
  ) {}

  static async start(options: HiveMetastoreServerOptions = {}): Promise<HiveMetastoreServer> {
    const Transport = options.transport === "framed" ? thrift.TFramedTransport : thrift.TBufferedTransport;
    let self: HiveMetastoreServer | undefined;
    const handler = handlerFor(() => self as HiveMetastoreServer);
    const server = thrift.createServer(
      ThriftHiveMetastore.Processor,
      handler as never,
      {
        transport: Transport,
        protocol: thrift.TBinaryProtocol,
      } as never,
    ) as unknown as Server;
    self = new HiveMetastoreServer(server, options.lockTimeoutMs);
    const metastore = self;
    server.on("error", (err) => metastore.errors.push(err));
    const sasl = options.sasl;
    if (sasl) {
      const [serve] = server.listeners("connection") as ((stream: Duplex) => void)[];
      server.removeAllListeners("connection");
      server.on("connection", (socket: Socket) => {
        metastore.track(socket);
        saslLogin(socket, sasl).then(
          (reader) => serve?.call(server, framedStream(socket, reader)),
          () => socket.end(),
        );
      });
    } else server.on("connection", (socket: Socket) => metastore.track(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self.uri = `thrift://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return self;
  }

  /** Runs `fn` with the arguments before each `method` call is served; returns the undo. */
  before(method: string, fn: Hook): () => void {
    const list = this.hooks.get(method) ?? [];
    list.push(fn);
    this.hooks.set(method, list);
    return () => {
      const at = list.indexOf(fn);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** The calls of `method` so far. */
  callsOf(method: string): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  addDatabase(name: string, locationUri = `file:///warehouse/${name}.db`): HiveIdl.Database {
    const db = new ttypes.Database({ name, description: "", locationUri, parameters: {} });
    this.databases.set(name, db);
    return db;
  }

  /** A Hive table of Parquet files, with `partitions` when it has `partitionKeys`. */
  registerParquetTable(spec: TableSpec, partitions: PartitionSpec[] = []): HiveIdl.Table {
    const table = this.register(spec, PARQUET_FORMAT);
    for (const p of partitions) this.addPartition(spec.db, spec.name, p);
    return table;
  }

  /** An ACID table (`transactional=true`), stored as Parquet so that only ACID marks it. */
  registerTransactionalTable(spec: TableSpec): HiveIdl.Table {
    return this.register(
      { ...spec, tableType: "MANAGED_TABLE", parameters: { ...spec.parameters, transactional: "true" } },
      PARQUET_FORMAT,
    );
  }

  /** A table of text files (`TextInputFormat`). */
  registerTextTable(spec: TableSpec): HiveIdl.Table {
    return this.register(spec, TEXT_FORMAT);
  }

  /** An Iceberg table registered in the metastore, as Iceberg's `HiveCatalog` does. */
  registerIcebergTable(spec: TableSpec & { metadataLocation: string }): HiveIdl.Table {
    return this.register(
      {
        ...spec,
        tableType: "EXTERNAL_TABLE",
        parameters: {
          ...spec.parameters,
          EXTERNAL: "TRUE",
          table_type: "ICEBERG",
          metadata_location: spec.metadataLocation,
        },
      },
      ICEBERG_FORMAT,
    );
  }

  /** A view: no location, no data; its query in `viewOriginalText`. */
  registerView(spec: { db: string; name: string; sql: string }): HiveIdl.Table {
    const view = this.register(
      { db: spec.db, name: spec.name, location: "", tableType: "VIRTUAL_VIEW" },
      { inputFormat: "org.apache.hadoop.mapred.SequenceFileInputFormat", outputFormat: "", serde: "" },
    );
    view.viewOriginalText = spec.sql;
    view.viewExpandedText = spec.sql;
    return view;
  }

  addPartition(db: string, table: string, spec: PartitionSpec): HiveIdl.Partition {
    const entry = this.entry(db, table);
    if (!entry) throw new Error(`no table ${db}.${table}`);
    const name = partitionName(entry.table.partitionKeys, spec.values);
    const params: Record<string, string> = { transient_lastDdlTime: String(nowSeconds()) };
    if (spec.totalSize !== undefined) params.totalSize = String(spec.totalSize);
    const partition = new ttypes.Partition({
      values: spec.values,
      dbName: db,
      tableName: table,
      createTime: nowSeconds(),
      lastAccessTime: 0,
      sd: new ttypes.StorageDescriptor({
        ...entry.table.sd,
        location: spec.location ?? `${entry.table.sd.location.replace(/\/$/, "")}/${name}`,
      }),
      parameters: params,
    });
    entry.partitions.set(name, partition);
    return partition;
  }

  dropTable(db: string, name: string): void {
    this.tables.delete(`${db}.${name}`);
  }

  /** Drops the database and its tables (a metastore's `DROP DATABASE ... CASCADE`). */
  dropDatabase(name: string): void {
    this.databases.delete(name);
    for (const [key, entry] of this.tables) if (entry.table.dbName === name) this.tables.delete(key);
  }

  table(db: string, name: string): HiveIdl.Table | undefined {
    return this.entry(db, name)?.table;
  }

  partition(db: string, table: string, name: string): HiveIdl.Partition | undefined {
    return this.entry(db, table)?.partitions.get(name);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  // -------------------------------------------------------------------------------------------
  // What the handler calls

  /** Logs the call, runs its hooks, then serves it. */
  async serve<T>(method: string, args: unknown[], fn: () => T): Promise<T> {
    this.calls.push({ method, args });
    for (const hook of this.hooks.get(method) ?? []) await hook(args);
    return fn();
  }

  entry(db: string, name: string) {
    return this.tables.get(`${db}.${name}`);
  }

  requireTable(db: string, name: string) {
    const entry = this.entry(db, name);
    if (!entry) throw new ttypes.NoSuchObjectException({ message: `${db}.${name} table not found` });
    return entry;
  }

  lock(request: HiveIdl.LockRequest): HiveIdl.LockResponse {
    this.expireLocks();
    const id = this.nextLockId++;
    const component = request.component[0];
    if (!component || request.component.length !== 1)
      throw new ttypes.MetaException({ message: "this metastore takes one lock component per request" });
    this.locks.set(id, {
      id,
      type: component.type,
      db: component.dbname,
      table: component.tablename ?? undefined,
      partition: component.partitionname ?? undefined,
      state: "WAITING",
      lastHeartbeat: Date.now(),
    });
    return this.checkLock(id);
  }

  checkLock(id: number): HiveIdl.LockResponse {
    this.expireLocks();
    const lock = this.locks.get(id);
    if (!lock) throw new ttypes.NoSuchLockException({ message: `No such lock lockid:${id}` });
    lock.lastHeartbeat = Date.now();
    const blocked =
      lock.state === "WAITING" && [...this.locks.values()].some((o) => o.id < id && conflicts(lock, o));
    lock.state = blocked ? "WAITING" : "ACQUIRED";
    return new ttypes.LockResponse({ lockid: new thrift.Int64(id), state: ttypes.LockState[lock.state] });
  }

  unlock(id: number): void {
    if (!this.locks.delete(id))
      throw new ttypes.NoSuchLockException({ message: `No such lock lockid:${id}` });
  }

  heartbeat(id: number): void {
    this.expireLocks();
    const lock = this.locks.get(id);
    if (!lock) throw new ttypes.NoSuchLockException({ message: `No such lock lockid:${id}` });
    lock.lastHeartbeat = Date.now();
  }

  /** Drops the locks not heard of within `lockTimeoutMs`. */
  private expireLocks(): void {
    if (this.lockTimeoutMs === undefined) return;
    const before = Date.now() - this.lockTimeoutMs;
    for (const [id, lock] of this.locks) if (lock.lastHeartbeat < before) this.locks.delete(id);
  }

  private register(spec: TableSpec, format: typeof PARQUET_FORMAT): HiveIdl.Table {
    if (!this.databases.has(spec.db)) this.addDatabase(spec.db);
    const parameters: Record<string, string> = {
      transient_lastDdlTime: String(spec.ddlTime ?? nowSeconds()),
      ...spec.parameters,
    };
    if (spec.totalSize !== undefined) parameters.totalSize = String(spec.totalSize);
    if ((spec.tableType ?? "EXTERNAL_TABLE") === "EXTERNAL_TABLE") parameters.EXTERNAL ??= "TRUE";
    const table = new ttypes.Table({
      tableName: spec.name,
      dbName: spec.db,
      owner: "hive",
      createTime: nowSeconds(),
      lastAccessTime: 0,
      retention: 0,
      sd: new ttypes.StorageDescriptor({
        cols: (spec.columns ?? DEFAULT_COLUMNS).map((c) => new ttypes.FieldSchema({ ...c, comment: "" })),
        location: spec.location,
        inputFormat: format.inputFormat,
        outputFormat: format.outputFormat,
        compressed: false,
        numBuckets: -1,
        serdeInfo: new ttypes.SerDeInfo({ name: "", serializationLib: format.serde, parameters: {} }),
        bucketCols: [],
        sortCols: [],
        parameters: {},
      }),
      partitionKeys: (spec.partitionKeys ?? []).map((c) => new ttypes.FieldSchema({ ...c, comment: "" })),
      parameters,
      viewOriginalText: "",
      viewExpandedText: "",
      tableType: spec.tableType ?? "EXTERNAL_TABLE",
    });
    this.tables.set(`${spec.db}.${spec.name}`, { table, partitions: new Map() });
    return table;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
  }
}

/** `k1=v1/k2=v2` for a partition's values. */
export function partitionName(keys: HiveIdl.FieldSchema[], values: string[]): string {
  if (keys.length !== values.length)
    throw new Error(`${keys.length} partition keys, ${values.length} values`);
  return keys.map((k, i) => `${k.name}=${values[i]}`).join("/");
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

const { EXCLUSIVE, SHARED_WRITE } = ttypes.LockType;

function conflicts(a: HeldLock, b: HeldLock): boolean {
  if (a.db !== b.db) return false;
  const overlap =
    a.table === undefined ||
    b.table === undefined ||
    (a.table === b.table &&
      (a.partition === undefined || b.partition === undefined || a.partition === b.partition));
  if (!overlap) return false;
  if (a.type === EXCLUSIVE || b.type === EXCLUSIVE) return true;
  return a.type === SHARED_WRITE && b.type === SHARED_WRITE;
}

function withDdlTime<T extends { parameters: Record<string, string> }>(object: T): T {
  object.parameters ??= {};
  const ddl = object.parameters.transient_lastDdlTime;
  if (ddl === undefined || ddl === "0") object.parameters.transient_lastDdlTime = String(nowSeconds());
  return object;
}

/**
 * The metastore's calls. Each method declares exactly its IDL arguments: the generated processor
 * treats a handler method with as many parameters as the call has arguments as promise-returning.
 */
function handlerFor(metastore: () => HiveMetastoreServer) {
  const ms = metastore;
  return {
    get_all_databases() {
      return ms().serve("get_all_databases", [], () => [...ms().databases.keys()]);
    },
    get_database(name: string) {
      return ms().serve("get_database", [name], () => {
        const db = ms().databases.get(name);
        if (!db) throw new ttypes.NoSuchObjectException({ message: `database ${name} not found` });
        return db;
      });
    },
    get_all_tables(db_name: string) {
      return ms().serve("get_all_tables", [db_name], () =>
        [...ms().tables.values()].filter((e) => e.table.dbName === db_name).map((e) => e.table.tableName),
      );
    },
    get_table(dbname: string, tbl_name: string) {
      return ms().serve("get_table", [dbname, tbl_name], () => ms().requireTable(dbname, tbl_name).table);
    },
    get_table_objects_by_name(dbname: string, tbl_names: string[]) {
      return ms().serve("get_table_objects_by_name", [dbname, tbl_names], () => {
        if (!ms().databases.has(dbname))
          throw new ttypes.UnknownDBException({ message: `Could not find database ${dbname}` });
        return tbl_names.flatMap((name) => {
          const entry = ms().entry(dbname, name);
          return entry ? [entry.table] : [];
        });
      });
    },
    get_partition_names(db_name: string, tbl_name: string, max_parts: number) {
      return ms().serve("get_partition_names", [db_name, tbl_name, max_parts], () => {
        const names = [...(ms().entry(db_name, tbl_name)?.partitions.keys() ?? [])];
        return max_parts < 0 ? names : names.slice(0, max_parts);
      });
    },
    get_partitions(db_name: string, tbl_name: string, max_parts: number) {
      return ms().serve("get_partitions", [db_name, tbl_name, max_parts], () => {
        const parts = [...ms().requireTable(db_name, tbl_name).partitions.values()];
        return max_parts < 0 ? parts : parts.slice(0, max_parts);
      });
    },
    get_partitions_by_names(db_name: string, tbl_name: string, names: string[]) {
      return ms().serve("get_partitions_by_names", [db_name, tbl_name, names], () => {
        const entry = ms().requireTable(db_name, tbl_name);
        return names.flatMap((n) => {
          const p = entry.partitions.get(n);
          return p ? [p] : [];
        });
      });
    },
    get_partition(db_name: string, tbl_name: string, part_vals: string[]) {
      return ms().serve("get_partition", [db_name, tbl_name, part_vals], () => {
        const entry = ms().requireTable(db_name, tbl_name);
        const name = partitionName(entry.table.partitionKeys, part_vals);
        const p = entry.partitions.get(name);
        if (!p)
          throw new ttypes.NoSuchObjectException({
            message: `partition values=[${part_vals.join(", ")}] of ${db_name}.${tbl_name} not found`,
          });
        return p;
      });
    },
    alter_partition(db_name: string, tbl_name: string, new_part: HiveIdl.Partition) {
      return ms().serve("alter_partition", [db_name, tbl_name, new_part], () => {
        const entry = ms().entry(db_name, tbl_name);
        const name = entry ? partitionName(entry.table.partitionKeys, new_part.values) : "";
        if (!entry?.partitions.has(name))
          throw new ttypes.InvalidOperationException({
            message: `alter is not possible: partition ${name} of ${db_name}.${tbl_name} does not exist`,
          });
        entry.partitions.set(name, withDdlTime(new_part));
      });
    },
    alter_partitions(db_name: string, tbl_name: string, new_parts: HiveIdl.Partition[]) {
      return ms().serve("alter_partitions", [db_name, tbl_name, new_parts], () => {
        const entry = ms().entry(db_name, tbl_name);
        const names = new_parts.map((p) => (entry ? partitionName(entry.table.partitionKeys, p.values) : ""));
        const missing = names.find((name) => !entry?.partitions.has(name));
        if (!entry || missing !== undefined)
          throw new ttypes.InvalidOperationException({
            message: `alter is not possible: partition ${missing} of ${db_name}.${tbl_name} does not exist`,
          });
        for (const [i, p] of new_parts.entries()) entry.partitions.set(names[i] as string, withDdlTime(p));
      });
    },
    alter_table(dbname: string, tbl_name: string, new_tbl: HiveIdl.Table) {
      return ms().serve("alter_table", [dbname, tbl_name, new_tbl], () => {
        const entry = ms().entry(dbname, tbl_name);
        if (!entry)
          throw new ttypes.InvalidOperationException({
            message: `alter is not possible: ${dbname}.${tbl_name} does not exist`,
          });
        ms().tables.delete(`${dbname}.${tbl_name}`);
        ms().tables.set(`${new_tbl.dbName}.${new_tbl.tableName}`, {
          table: withDdlTime(new_tbl),
          partitions: entry.partitions,
        });
      });
    },
    lock(rqst: HiveIdl.LockRequest) {
      return ms().serve("lock", [rqst], () => ms().lock(rqst));
    },
    check_lock(rqst: HiveIdl.CheckLockRequest) {
      return ms().serve("check_lock", [rqst], () => ms().checkLock(rqst.lockid.toNumber()));
    },
    unlock(rqst: HiveIdl.UnlockRequest) {
      return ms().serve("unlock", [rqst], () => ms().unlock(rqst.lockid.toNumber()));
    },
    heartbeat(ids: HiveIdl.HeartbeatRequest) {
      return ms().serve("heartbeat", [ids], () => {
        if (ids.lockid) ms().heartbeat(ids.lockid.toNumber());
      });
    },
  };
}

/** The server's side of the SASL PLAIN negotiation (`sasl.ts`); rejects after refusing. */
function saslLogin(socket: Socket, expected: { username: string; password: string }): Promise<FrameReader> {
  return new Promise((resolve, reject) => {
    const reader = new FrameReader(5);
    let mechanism: string | null = null;
    let first = true;
    const refuse = (why: string) => {
      socket.off("data", onData);
      socket.write(negotiationMessage(SaslStatus.BAD, Buffer.from(why)));
      reject(new Error(why));
    };
    const onData = (bytes: Buffer) => {
      // A status byte no negotiation has (a Thrift call's first byte) is refused at once, as
      // Thrift's SASL transport does, instead of waiting for a length that will never arrive.
      if (first && bytes[0] !== SaslStatus.START) return refuse(`Invalid status ${bytes[0]}`);
      first = false;
      reader.append(bytes);
      for (;;) {
        let m: { status: number; payload: Buffer } | null;
        try {
          m = reader.next();
        } catch (err) {
          return refuse(`not a SASL negotiation: ${(err as Error).message}`);
        }
        if (m === null) return;
        if (mechanism === null) {
          if (m.status !== SaslStatus.START) return refuse(`Invalid status ${m.status}`);
          mechanism = m.payload.toString();
          if (mechanism !== "PLAIN") return refuse(`Unsupported mechanism type ${mechanism}`);
          continue;
        }
        const login = parsePlainResponse(m.payload);
        if (!login || login.username !== expected.username || login.password !== expected.password)
          return refuse("Error validating the login");
        socket.off("data", onData);
        socket.write(negotiationMessage(SaslStatus.COMPLETE, Buffer.alloc(0)));
        reader.headerBytes = 4;
        return resolve(reader);
      }
    };
    socket.on("data", onData);
    socket.on("error", reject);
  });
}

/** The socket's data frames as a stream of Thrift bytes, each write one frame. */
function framedStream(socket: Socket, reader: FrameReader): Duplex {
  const stream = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      socket.write(dataFrame(chunk), done);
    },
    final(done) {
      socket.end();
      done();
    },
  });
  const drain = () => {
    try {
      for (let f = reader.next(); f !== null; f = reader.next()) stream.push(f.payload);
    } catch (err) {
      stream.destroy(err as Error);
      socket.destroy();
    }
  };
  socket.on("data", (bytes: Buffer) => {
    reader.append(bytes);
    drain();
  });
  socket.on("end", () => stream.push(null));
  socket.on("error", (err) => stream.destroy(err));
  drain();
  return stream;
}
