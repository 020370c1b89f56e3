/**
 * The agent's one door to DuckDB (architecture.md, "Dependency rules": only the engine module talks
 * to DuckDB). DuckDB works on local files only: callers download objects into the job's scratch
 * folder first and hand the engine paths.
 *
 * An `Engine` is one in-memory DuckDB database with a memory limit and a spill folder, so a job's
 * memory is bounded by its settings rather than by the table. Closing one readies a spare database
 * for the next `open` (see `spares`); `sumTap` sums a value over the rows a query passes, inside
 * that query (a JavaScript scalar function). Values come back as plain JavaScript
 * (`getRowObjectsJson`): BIGINT and DECIMAL as strings where they would lose precision, dates and
 * timestamps as ISO strings, structs and maps as objects.
 *
 * @example
 * const engine = await Engine.open({ memoryLimitMb: 512, tempDir: join(scratch, "duckdb") });
 * try {
 *   const [row] = await engine.query<{ n: string }>(`select count(*) as n from read_parquet(${sqlList(files)})`);
 * } finally {
 *   engine.close();
 * }
 */
import { mkdir } from "node:fs/promises";
import type { DuckDBConnection, DuckDBInstance, DuckDBValue } from "@duckdb/node-api";

/**
 * DuckDB's native library, loaded by the first `open` rather than at start: an agent that only
 * syncs catalogs or discovers prefixes never maps its 35 MB.
 */
let duckdb: Promise<typeof import("@duckdb/node-api")> | undefined;
const loadDuckDB = () => {
  duckdb ??= import("@duckdb/node-api");
  return duckdb;
};

export interface EngineOptions {
  /** DuckDB's `memory_limit`; larger intermediate results spill to `tempDir`. */
  memoryLimitMb?: number;
  /** Worker threads; defaults to DuckDB's choice (the machine's cores). */
  threads?: number;
  /** Where DuckDB spills; created if missing. Put it in the job's scratch folder. */
  tempDir?: string;
}

export const DEFAULT_MEMORY_LIMIT_MB = 512;

/** `Engine.sumTap`'s tap: its SQL call and what passed through it so far. */
export interface SumTap {
  /** The SQL function's name (unique in the process). */
  readonly name: string;
  /** SQL: the tap applied to a `UBIGINT` expression; true for every row. */
  call(expr: string): string;
  /** Rows the tap saw. */
  readonly rows: number;
  /** The exact sum of the non-null values it saw. */
  readonly sum: bigint;
}

/** Taps created in this process: each gets a function name of its own. */
let taps = 0;

export class Engine {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    /** DuckDB's `memory_limit`, for callers that size their work to it (tune.ts). */
    readonly memoryLimitMb: number,
    private readonly settings: Record<string, string>,
  ) {}

  static async open(options: EngineOptions = {}): Promise<Engine> {
    const memoryLimitMb = options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB;
    const settings: Record<string, string> = {
      memory_limit: `${memoryLimitMb}MB`,
      // Settings that would let SQL reach outside the files the agent hands over stay off.
      autoinstall_known_extensions: "false",
      autoload_known_extensions: "false",
      // DuckDB keeps the Parquet data it reads in memory, up to its memory limit, for a later read of
      // the same file; the agent reads local copies, which the OS caches anyway. With the cache on,
      // a whole-table crunch's resident memory grew with the table, past the limit (1,163 MB on a
      // 2.4 GB table under a 768 MB limit; 329 MB with it off).
      enable_external_file_cache: "false",
    };
    if (options.threads) settings.threads = String(options.threads);
    const instance = await takeInstance(settings);
    const connection = await instance.connect();
    // Casts between TIMESTAMP and TIMESTAMPTZ (Spark's INT96 files read as TIMESTAMP) must not depend
    // on the host's zone: Delta timestamps are UTC instants. (An ICU setting: not settable at create.)
    await connection.run("set TimeZone = 'UTC'");
    if (options.tempDir) {
      await mkdir(options.tempDir, { recursive: true });
      await connection.run(`set temp_directory = ${sqlString(options.tempDir)}`);
    }
    return new Engine(instance, connection, memoryLimitMb, settings);
  }

  /** Runs one statement (or several separated by `;`) and discards any rows. */
  async run(sql: string, params?: Record<string, DuckDBValue> | DuckDBValue[]): Promise<void> {
    await this.connection.run(sql, params);
  }

  /** Runs a query and returns its rows as JSON-safe objects (see the module comment for types). */
  async query<T = Record<string, unknown>>(
    sql: string,
    params?: Record<string, DuckDBValue> | DuckDBValue[],
  ): Promise<T[]> {
    const reader = await this.connection.runAndReadAll(sql, params);
    return reader.getRowObjectsJson() as T[];
  }

  /**
   * Runs a query and yields its rows a chunk at a time (DuckDB's vector size, 2,048 rows), as
   * `query` types them, so a large result is never held whole in JavaScript.
   */
  async *queryChunks<T = Record<string, unknown>>(
    sql: string,
    params?: Record<string, DuckDBValue> | DuckDBValue[],
  ): AsyncIterable<T[]> {
    const result = await this.connection.stream(sql, params);
    for await (const rows of result.yieldRowObjectJson()) yield rows as T[];
  }

  /**
   * A tap that sums a `UBIGINT` exactly over the rows a query passes through it, inside that
   * query's own scan (no second read): `where ${tap.call(expr)}` is true for every row and adds
   * `expr` to `tap.sum` a chunk at a time. A JavaScript scalar function, volatile so the optimizer
   * neither folds nor drops it; DuckDB's threads hand it chunks in any order, so read the sum only
   * after the query ended, as an order-insensitive total. Each tap is a function of its own,
   * registered on this database for its life.
   */
  async sumTap(): Promise<SumTap> {
    const { BOOLEAN, DuckDBScalarFunction, UBIGINT } = await loadDuckDB();
    const name = `lakesmith_tap_${++taps}`;
    const seen = { rows: 0, sum: 0n };
    this.connection.registerScalarFunction(
      DuckDBScalarFunction.create({
        name,
        returnType: BOOLEAN,
        parameterTypes: [UBIGINT],
        volatile: true,
        mainFunction: (_info, input, output) => {
          const values = input.getColumnVector(0);
          let sum = 0n;
          for (let i = 0; i < input.rowCount; i++) {
            sum += (values.getItem(i) as bigint | null) ?? 0n;
            output.setItem(i, true);
          }
          output.flush();
          seen.rows += input.rowCount;
          seen.sum += sum;
        },
      }),
    );
    return {
      name,
      call: (expr) => `${name}(${expr})`,
      get rows() {
        return seen.rows;
      },
      get sum() {
        return seen.sum;
      },
    };
  }

  /** DuckDB's worker threads: how many row groups are written at once (tune.ts sizes them by it). */
  async threads(): Promise<number> {
    const [row] = await this.query<{ threads: number }>(`select current_setting('threads')::int as threads`);
    return Number(row?.threads ?? 1);
  }

  /** Closes the database (its memory and spill files go) and readies a spare for the next `open`. */
  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
    keepSpare(this.settings);
  }
}

/**
 * Spare databases, one per set of creation settings: creating a DuckDB database takes 10–20 ms,
 * which a short job (a crunch of a few MB) would otherwise pay every time. A spare is created when
 * an engine closes, between jobs rather than during one, and is taken, unused, by the next `open`
 * with the same settings; each job still gets a database of its own.
 */
const spares = new Map<string, Promise<DuckDBInstance>>();

async function takeInstance(settings: Record<string, string>): Promise<DuckDBInstance> {
  const key = JSON.stringify(settings);
  const spare = spares.get(key);
  spares.delete(key);
  return (
    (await spare?.catch(() => undefined)) ?? (await loadDuckDB()).DuckDBInstance.create(":memory:", settings)
  );
}

function keepSpare(settings: Record<string, string>): void {
  const key = JSON.stringify(settings);
  if (spares.has(key)) return;
  const created = loadDuckDB().then(({ DuckDBInstance }) => DuckDBInstance.create(":memory:", settings));
  // A failure surfaces when the spare is taken: `open` then creates a database as usual.
  created.catch(() => {
    if (spares.get(key) === created) spares.delete(key);
  });
  spares.set(key, created);
}

/** A SQL string literal: `it's` becomes `'it''s'`. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** A SQL identifier: `my "col"` becomes `"my ""col"""`. */
export function sqlIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQL list of string literals, for `read_parquet([...])`. */
export function sqlList(values: readonly string[]): string {
  return `[${values.map(sqlString).join(", ")}]`;
}
