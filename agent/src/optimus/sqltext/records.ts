/**
 * The JSON-lines records of every log object under a prefix, for the readers whose logs are one JSON
 * object per line (Trino query events, SQL logs), and the values those records carry.
 *
 * Rules:
 * - Objects are read in key order; `.gz` objects are gunzipped (several gzip members in one object,
 *   as rotating writers append them, read as one stream). Dot-files, `_`-files (`_SUCCESS`) and
 *   `.crc` checksums are skipped.
 * - One line at a time (`spark/lines.ts`): memory follows the longest line, not the object.
 * - A blank line is skipped; a line that is not a JSON object is counted in `malformedLines` and
 *   skipped, never ending the read.
 */
import { pipeline, type Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { ObjectStore } from "../../store/index.ts";
import type { LoggedQuery, QueryLogReader, ReadStats } from "../query.ts";
import { linesOf } from "../spark/lines.ts";

export interface LogRecord {
  /** The object's key. */
  key: string;
  /** The line's number in the (decompressed) object, from 1. */
  line: number;
  fields: Record<string, unknown>;
}

/** Every JSON-object line of every log under `prefix`, counted in `stats`. */
export async function* jsonRecords(
  store: ObjectStore,
  prefix: string,
  stats: ReadStats,
): AsyncIterable<LogRecord> {
  for await (const info of store.list(prefix)) {
    const name = info.key.slice(info.key.lastIndexOf("/") + 1);
    if (name === "" || name.startsWith(".") || name.startsWith("_") || name.endsWith(".crc")) continue;
    stats.logs++;
    let line = 0;
    for await (const text of linesOf(await bytesOf(store, info.key))) {
      line++;
      stats.lines++;
      if (text.trim() === "") continue;
      const fields = parseObject(text);
      if (fields) yield { key: info.key, line, fields };
      else stats.malformedLines++;
    }
  }
}

/** What one record is to a reader: a query, one to skip, or not a record of its log at all. */
export type RecordVerdict = LoggedQuery | "skipped" | "malformed";

/** A `QueryLogReader` over JSON-lines logs, turning each record into a query with `toQuery`. */
export function jsonLinesReader(toQuery: (record: LogRecord) => RecordVerdict): QueryLogReader {
  return async function* (store, prefix, stats) {
    for await (const record of jsonRecords(store, prefix, stats)) {
      const query = toQuery(record);
      if (query === "malformed") stats.malformedLines++;
      else if (query !== "skipped") yield query;
    }
  };
}

async function bytesOf(store: ObjectStore, key: string): Promise<Readable> {
  const raw = await store.read(key);
  if (!key.endsWith(".gz")) return raw;
  return pipeline(raw, createGunzip(), () => {});
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The first of `names` that `fields` holds as a non-empty string. */
export function stringField(fields: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = fields[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** A byte count or other non-negative number, written as a number or a numeric string. */
export function countOf(value: unknown): number | undefined {
  const n =
    typeof value === "number"
      ? value
      : typeof value === "string" && value !== ""
        ? Number(value)
        : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

/**
 * A time written as an ISO-8601 string or a number since the epoch: milliseconds, or seconds (with
 * a fraction, as Jackson writes an `Instant`) when below 10^11.
 */
export function timeOf(value: unknown): Date | undefined {
  if (typeof value === "string" && /^\d+(\.\d+)?$/.test(value)) return timeOf(Number(value));
  const ms =
    typeof value === "number"
      ? Math.abs(value) < 1e11
        ? value * 1000
        : value
      : typeof value === "string"
        ? Date.parse(value)
        : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}

/** A short label for a statement: its text, whitespace collapsed, cut to 80 characters. */
export function labelOf(sql: string): string {
  const flat = sql.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
