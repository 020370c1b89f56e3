/**
 * A Hive Metastore client: the real Thrift binary protocol over one TCP connection, buffered or
 * framed, with SASL PLAIN when a username is given (`sasl.ts`). Types and calls are generated from
 * the metastore IDL (`gen/`); this file gives the calls the agent makes typed promise methods.
 *
 * - One connection, calls multiplexed by sequence id. A call with no answer within `timeoutMs`
 *   fails with `timeout` and closes the connection (a late answer could not be matched safely);
 *   a closed connection fails every pending and later call with `network`.
 * - Every failure is a `HiveMetastoreError` naming the metastore and the call; a metastore
 *   exception keeps its class (`type`) and message. No message ever holds the password.
 * - Locks (`lock`, `checkLock`, `unlock`, `heartbeat`) are the metastore's lock manager without a
 *   transaction; `withTableLock` (`lock.ts`) is the way to hold one around a change.
 *
 * @example
 * const hms = await HiveMetastoreClient.connect({ uri: "thrift://metastore:9083" });
 * try { console.log(await hms.getAllDatabases()); } finally { hms.close(); }
 */
import { connect as connectSocket, type Socket } from "node:net";
import { hostname, userInfo } from "node:os";
import thrift from "thrift";
import { redact } from "../../iceberg/rest/http.ts";
import { HiveMetastoreError } from "./errors.ts";
import { type HiveIdl, ThriftHiveMetastore, type ThriftHiveMetastoreTypes, ttypes } from "./idl.ts";
import { type TableLockOptions, type TableLockScope, withTableLock } from "./lock.ts";
import { dataFrame, type FrameReader, negotiatePlain, SaslRefusedError } from "./sasl.ts";

export type HiveTable = HiveIdl.Table;
export type HivePartition = HiveIdl.Partition;
export type HiveStorageDescriptor = HiveIdl.StorageDescriptor;
export type HiveFieldSchema = HiveIdl.FieldSchema;
export { ttypes as hiveTypes };

export const DEFAULT_METASTORE_PORT = 9083;
export const DEFAULT_METASTORE_TIMEOUT_MS = 30_000;
/** Partitions read per call by `partitionBatches`. */
export const PARTITION_BATCH = 100;

export interface HiveConnectOptions {
  /** `thrift://host:port` (port 9083 when absent). */
  uri: string;
  username?: string;
  password?: string;
  /** The metastore's `hive.metastore.thrift.framed.transport.enabled`; default buffered. */
  transport?: "buffered" | "framed";
  /** For the connection and each call. Default 30 s. */
  timeoutMs?: number;
}

export type LockTypeName = "SHARED_READ" | "SHARED_WRITE" | "EXCLUSIVE";
export type LockStateName = "ACQUIRED" | "WAITING" | "ABORT" | "NOT_ACQUIRED";

/** What a lock covers: a database, a table, or one partition (`a=1/b=2`) of a table. */
export interface LockTarget {
  db: string;
  table?: string;
  partition?: string;
}

/** The generated client's reply table, which the receive loop below feeds. */
type Replies = Record<number, ((err: unknown, result?: unknown) => void) | undefined>;
type Internals = { _reqs: Replies } & Record<string, unknown>;

export class HiveMetastoreClient {
  readonly uri: string;
  private readonly thrift: ThriftHiveMetastoreTypes.Client;
  private readonly pending = new Set<(err: Error) => void>();
  private closedBy: HiveMetastoreError | null = null;

  private constructor(
    private readonly socket: Socket,
    private readonly options: HiveConnectOptions & { timeoutMs: number },
    private readonly sasl: FrameReader | null,
  ) {
    this.uri = options.uri;
    const Transport = options.transport === "framed" ? thrift.TFramedTransport : thrift.TBufferedTransport;
    const output = new Transport(undefined, (buf?: Buffer) => {
      if (buf) this.send(buf);
    });
    this.thrift = new ThriftHiveMetastore.Client(output as never, thrift.TBinaryProtocol as never);
    const receive = Transport.receiver((transport) => this.dispatch(transport), 0);
    socket.on("data", (bytes: Buffer) => {
      if (!sasl) return receive(bytes);
      sasl.append(bytes);
      for (let frame = this.nextFrame(); frame !== null; frame = this.nextFrame()) receive(frame);
    });
    socket.on("error", (err) =>
      this.fail(new HiveMetastoreError("network", "connection", this.at(err.message))),
    );
    socket.on("close", () => this.fail(new HiveMetastoreError("network", "connection", this.at("closed"))));
    // Replies can't precede calls, but a reader that holds a frame must not sit on it.
    for (let frame = this.nextFrame(); frame !== null; frame = this.nextFrame()) receive(frame);
  }

  /** Connects (and logs in, with a username); throws `HiveMetastoreError`. */
  static async connect(options: HiveConnectOptions): Promise<HiveMetastoreClient> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_METASTORE_TIMEOUT_MS;
    const { host, port } = parseMetastoreUri(options.uri);
    const where = `Hive Metastore ${options.uri}`;
    const socket = await openSocket(host, port, timeoutMs, where);
    let sasl: FrameReader | null = null;
    if (options.username !== undefined) {
      const login = negotiatePlain(socket, options.username, options.password ?? "");
      try {
        sasl = await withTimeout(login, timeoutMs, () => {
          socket.destroy();
          return new HiveMetastoreError(
            "timeout",
            "login",
            `${where}: no answer to the login within ${timeoutMs} ms`,
          );
        });
      } catch (err) {
        socket.destroy();
        if (err instanceof HiveMetastoreError) throw err;
        const reason = redact(err instanceof Error ? err.message : String(err), [options.password ?? ""]);
        if (err instanceof SaslRefusedError)
          throw new HiveMetastoreError(
            "refused",
            "login",
            `${where} refused the SASL PLAIN login of user '${options.username}': ${reason}`,
          );
        throw new HiveMetastoreError("network", "login", `${where}: the SASL PLAIN login failed: ${reason}`);
      }
    }
    return new HiveMetastoreClient(socket, { ...options, timeoutMs }, sasl);
  }

  getAllDatabases(): Promise<string[]> {
    return this.call("get_all_databases", () => this.thrift.get_all_databases());
  }

  getAllTables(db: string): Promise<string[]> {
    return this.call("get_all_tables", () => this.thrift.get_all_tables(db));
  }

  getTable(db: string, name: string): Promise<HiveTable> {
    return this.call("get_table", () => this.thrift.get_table(db, name));
  }

  /** The tables among `names` that exist (a missing one is left out, as the metastore does). */
  getTableObjectsByName(db: string, names: string[]): Promise<HiveTable[]> {
    return this.call("get_table_objects_by_name", () => this.thrift.get_table_objects_by_name(db, names));
  }

  /** Partition names (`a=1/b=2`); `max` -1 is all of them. */
  listPartitionNames(db: string, table: string, max = -1): Promise<string[]> {
    return this.call("get_partition_names", () => this.thrift.get_partition_names(db, table, max));
  }

  /** Every partition of the table, `batch` at a time (one name listing, then reads by name). */
  async *partitionBatches(
    db: string,
    table: string,
    batch = PARTITION_BATCH,
  ): AsyncGenerator<HivePartition[]> {
    const names = await this.listPartitionNames(db, table);
    for (let at = 0; at < names.length; at += batch)
      yield await this.getPartitionsByNames(db, table, names.slice(at, at + batch));
  }

  getPartitionsByNames(db: string, table: string, names: string[]): Promise<HivePartition[]> {
    return this.call("get_partitions_by_names", () => this.thrift.get_partitions_by_names(db, table, names));
  }

  getPartition(db: string, table: string, values: string[]): Promise<HivePartition> {
    return this.call("get_partition", () => this.thrift.get_partition(db, table, values));
  }

  alterPartition(db: string, table: string, partition: HivePartition): Promise<void> {
    return this.call("alter_partition", () => this.thrift.alter_partition(db, table, partition));
  }

  /** Alters several partitions of one table in one call: the metastore applies all or none. */
  alterPartitions(db: string, table: string, partitions: HivePartition[]): Promise<void> {
    return this.call("alter_partitions", () => this.thrift.alter_partitions(db, table, partitions));
  }

  alterTable(db: string, name: string, table: HiveTable): Promise<void> {
    return this.call("alter_table", () => this.thrift.alter_table(db, name, table));
  }

  /** Requests a lock without a transaction; `state` is ACQUIRED or WAITING (then poll `checkLock`). */
  async lock(target: LockTarget, type: LockTypeName): Promise<{ lockId: number; state: LockStateName }> {
    const level =
      target.partition !== undefined
        ? ttypes.LockLevel.PARTITION
        : target.table !== undefined
          ? ttypes.LockLevel.TABLE
          : ttypes.LockLevel.DB;
    const component = new ttypes.LockComponent({
      type: ttypes.LockType[type],
      level,
      dbname: target.db,
      ...(target.table === undefined ? {} : { tablename: target.table }),
      ...(target.partition === undefined ? {} : { partitionname: target.partition }),
      operationType: ttypes.DataOperationType.NO_TXN,
      isAcid: false,
    });
    const request = new ttypes.LockRequest({
      component: [component],
      user: this.options.username ?? userInfo().username,
      hostname: hostname(),
      agentInfo: "lakesmith-agent",
    });
    const response = await this.call("lock", () => this.thrift.lock(request));
    return { lockId: response.lockid.toNumber(), state: stateName(response.state) };
  }

  async checkLock(lockId: number): Promise<LockStateName> {
    const request = new ttypes.CheckLockRequest({ lockid: new thrift.Int64(lockId) });
    const response = await this.call("check_lock", () => this.thrift.check_lock(request));
    return stateName(response.state);
  }

  unlock(lockId: number): Promise<void> {
    const request = new ttypes.UnlockRequest({ lockid: new thrift.Int64(lockId) });
    return this.call("unlock", () => this.thrift.unlock(request));
  }

  /** Keeps a lock alive (the metastore aborts one not heard of for `hive.txn.timeout`). */
  heartbeat(lockId: number): Promise<void> {
    const request = new ttypes.HeartbeatRequest({ lockid: new thrift.Int64(lockId) });
    return this.call("heartbeat", () => this.thrift.heartbeat(request));
  }

  /** Runs `fn` holding a lock on the table or partition (see `lock.ts`); always unlocks. */
  withTableLock<T>(
    options: TableLockOptions,
    fn: (held: { lockId: number; signal: AbortSignal }) => Promise<T>,
  ): Promise<T> {
    return withTableLock(this, options, fn);
  }

  close(): void {
    this.fail(new HiveMetastoreError("network", "connection", this.at("closed by the client")));
    this.socket.destroy();
  }

  private send(buf: Buffer): void {
    this.socket.write(this.sasl ? dataFrame(buf) : buf);
  }

  private nextFrame(): Buffer | null {
    try {
      return this.sasl?.next()?.payload ?? null;
    } catch (err) {
      this.fail(new HiveMetastoreError("protocol", "connection", this.at((err as Error).message)));
      this.socket.destroy();
      return null;
    }
  }

  /**
   * Hands each whole reply in `transport` to the generated client. The reply's callback is moved
   * to a stand-in id first, so that a reply cut short (the buffered transport reads one from
   * the start again when more bytes arrive) leaves the caller's callback in place.
   */
  private dispatch(transport: thrift.TTransport): void {
    const input = new thrift.TBinaryProtocol(transport);
    const client = this.thrift as unknown as Internals;
    try {
      for (;;) {
        const header = input.readMessageBegin();
        const standIn = -header.rseqid;
        client._reqs[standIn] = (err, result) => {
          (transport as unknown as { commitPosition(): void }).commitPosition();
          const callback = client._reqs[header.rseqid];
          delete client._reqs[header.rseqid];
          callback?.(err, result);
        };
        const recv = client[`recv_${header.fname}`];
        if (typeof recv !== "function") {
          delete client._reqs[standIn];
          throw new Error(`a reply to an unknown call ${header.fname}`);
        }
        recv.call(client, input, header.mtype, standIn);
      }
    } catch (err) {
      if (err instanceof Error && err.name === "InputBufferUnderrunError") {
        (transport as unknown as { rollbackPosition(): void }).rollbackPosition();
        return;
      }
      this.fail(
        new HiveMetastoreError("protocol", "connection", this.at(`unreadable reply: ${String(err)}`)),
      );
      this.socket.destroy();
    }
  }

  private async call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.closedBy) throw this.closedBy;
    let abandon: ((err: Error) => void) | undefined;
    const broken = new Promise<never>((_, reject) => {
      abandon = reject;
    });
    const stop = abandon as (err: Error) => void;
    this.pending.add(stop);
    try {
      return await withTimeout(Promise.race([run(), broken]), this.options.timeoutMs, () => {
        const err = new HiveMetastoreError(
          "timeout",
          operation,
          this.at(`${operation}: no answer within ${this.options.timeoutMs} ms`),
        );
        this.fail(err);
        this.socket.destroy();
        return err;
      });
    } catch (err) {
      throw this.errorOf(operation, err);
    } finally {
      this.pending.delete(stop);
    }
  }

  private errorOf(operation: string, err: unknown): HiveMetastoreError {
    if (err instanceof HiveMetastoreError) return err;
    const secrets = [this.options.password ?? ""];
    if (err instanceof thrift.Thrift.TException && !(err instanceof thrift.Thrift.TApplicationException)) {
      const type = err.name;
      const message = redact(String(err.message ?? ""), secrets);
      return new HiveMetastoreError(
        "metastore",
        operation,
        this.at(`${operation}: ${type}: ${message}`),
        type,
      );
    }
    const message = redact(err instanceof Error ? err.message : String(err), secrets);
    return new HiveMetastoreError("protocol", operation, this.at(`${operation}: ${message}`));
  }

  private fail(err: HiveMetastoreError): void {
    this.closedBy ??= err;
    for (const stop of this.pending) stop(err);
    this.pending.clear();
  }

  private at(what: string): string {
    return `Hive Metastore ${this.uri}: ${what}`;
  }
}

/** Host and port of `thrift://host[:port]`; throws `HiveMetastoreError` for anything else. */
export function parseMetastoreUri(uri: string): { host: string; port: number } {
  const match = /^thrift:\/\/([^/:]+)(?::(\d+))?\/?$/.exec(uri);
  if (!match?.[1]) throw new HiveMetastoreError("network", "connect", `not a thrift://host:port URI: ${uri}`);
  const port = match[2] === undefined ? DEFAULT_METASTORE_PORT : Number(match[2]);
  if (port < 1 || port > 65535) throw new HiveMetastoreError("network", "connect", `no such port in ${uri}`);
  return { host: match[1], port };
}

function stateName(state: number): LockStateName {
  const name = (ttypes.LockState as unknown as Record<number, string>)[state];
  if (name === "ACQUIRED" || name === "WAITING" || name === "ABORT" || name === "NOT_ACQUIRED") return name;
  throw new HiveMetastoreError("protocol", "lock", `an unknown lock state ${state}`);
}

function openSocket(host: string, port: number, timeoutMs: number, where: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectSocket({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new HiveMetastoreError("timeout", "connect", `${where}: no connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.off("error", onError);
      socket.setNoDelay(true);
      resolve(socket);
    });
    const onError = (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why = err.code === "ECONNREFUSED" ? "connection refused" : err.message;
      reject(new HiveMetastoreError("network", "connect", `${where}: cannot connect (${why})`));
    };
    socket.once("error", onError);
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export type { TableLockOptions, TableLockScope };
