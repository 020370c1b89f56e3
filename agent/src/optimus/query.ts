/**
 * What every Optimus log reader yields (Spark event logs, Trino query events, SQL logs): one record
 * per query that scanned something, with each scan's table, locations and filters. The analysis
 * (`analysis/`) maps scans to tables and folds them into workloads; it never sees a log format.
 *
 * Rules: `predicates` are only column-versus-literal comparisons a layout can use (the Spark
 * reader's `Predicate`); one under an `OR` is marked `disjunctive`. `filterColumns` is every column
 * the filters reference. Times are UTC.
 */
import type { OptimusEngine } from "@lakesmith/shared/optimus";
import type { ObjectStore } from "../store/index.ts";
import type { Predicate } from "./spark/filters.ts";

export interface LoggedScan {
  /** The table as the engine printed it (`spark_catalog.db.t`, `hive.sales.orders`, `orders`), if it did. */
  table?: string;
  /** The table's root path(s) the engine listed, if it logged them. */
  locations: string[];
  filterColumns: string[];
  predicates: Predicate[];
  /** Bytes this scan read, where the log says per table (Trino's input metadata). */
  bytesScanned?: number;
}

export interface LoggedQuery {
  engine: OptimusEngine;
  /** The query's id in its log (a Spark execution `<log>#<id>`, a Trino query id, a SQL log's record id). */
  id: string;
  /** A short label: Spark's description (`query72`), or the head of the SQL text. */
  label?: string;
  startedAt?: Date;
  /** Bytes the query's scans read, where the log says. */
  bytesScanned?: number;
  /**
   * Who ran it, as the log names the client (Trino `source`/`user`, a SQL log's application, a
   * Spark application name): Lakesmith's own reads are recognized by it and never counted.
   */
  client?: string;
  scans: LoggedScan[];
}

/** Whether a query is one of Lakesmith's own reads (its agents tag their sessions `lakesmith…`). */
export function isOwnQuery(query: Pick<LoggedQuery, "client">): boolean {
  return query.client?.toLowerCase().startsWith("lakesmith") ?? false;
}

/** What a reader counts while it reads. */
export interface ReadStats {
  /** Log files (or rolling folders) read. */
  logs: number;
  lines: number;
  /** Lines or records that were not a readable event or statement: counted and skipped. */
  malformedLines: number;
}

/** A log reader: the queries of every log under `prefix` of `store`, streamed. */
export type QueryLogReader = (
  store: ObjectStore,
  prefix: string,
  stats: ReadStats,
) => AsyncIterable<LoggedQuery>;
