/**
 * Values a layout replay compares: a predicate's literal text, a simulated pseudo-file's min/max
 * (DuckDB's text of them) and a real file's statistics or partition value, all read in the column's
 * type and compared as the engine would. Pure.
 *
 * Rules:
 * - A column's kind comes from its type in the recipe's words (`Table.typeOf`): integers, decimals
 *   and floats are `number` (read exactly, as a decimal mantissa and scale, so `2000.5` on an integer
 *   column compares correctly); `date`; `timestamp` and `timestamp_ntz` are `timestamp` (microseconds
 *   since the epoch; text without a zone is UTC); `string` (compared by code point, which is the
 *   UTF-8 byte order engines use). Any other type (boolean, binary, nested) has no kind: predicates
 *   on it are unusable.
 * - A text that cannot be read as the kind (`abc` for a number, `2024-13-01` for a date, a
 *   timestamp with a time for a date column, `NaN`, `Infinity`) reads as undefined: a literal like
 *   that makes its predicate unusable; a bound like that is unknown (nothing is skipped on it).
 * - Literals may come quoted (`'CA'`, `DATE '2024-03-01'`) or with Spark's suffixes (`10L`, `1.5D`,
 *   `2.00BD`): one pair of single quotes and a type word are taken off before reading.
 *
 * @example
 * const v = readValue("date", "2024-03-01"); // 19783n (days since 1970-01-01)
 * compareValues("date", v, readValue("date", "2024-02-29")) // 1
 */

export type ValueKind = "number" | "date" | "timestamp" | "string";

/** An exact decimal: `m × 10^-s`. */
export interface Decimal {
  m: bigint;
  s: number;
}

/** A value of a kind: `Decimal` (number), `bigint` (date: days; timestamp: microseconds), `string`. */
export type Value = Decimal | bigint | string;

const KINDS: Record<string, ValueKind> = {
  byte: "number",
  short: "number",
  integer: "number",
  long: "number",
  decimal: "number",
  float: "number",
  double: "number",
  date: "date",
  timestamp: "timestamp",
  timestamp_ntz: "timestamp",
  string: "string",
};

/** The kind of a column from its type in the recipe's words; null where predicates can't be replayed. */
export function kindOf(recipeType: string): ValueKind | null {
  return KINDS[recipeType.toLowerCase()] ?? null;
}

const NUMBER = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|UTC|[+-]\d{2}(?::?\d{2})?)?$/i;
const DAY_MS = 86_400_000;

/** A value from JSON statistics or DuckDB text (numbers as JSON numbers or text); undefined when unreadable. */
export function readValue(kind: ValueKind, raw: unknown): Value | undefined {
  if (raw === null || raw === undefined) return undefined;
  if (typeof raw === "number") return kind === "number" ? readNumber(String(raw)) : undefined;
  if (typeof raw !== "string") return undefined;
  switch (kind) {
    case "number":
      return readNumber(raw.trim());
    case "date":
      return readDate(raw.trim());
    case "timestamp":
      return readTimestamp(raw.trim());
    case "string":
      return raw;
  }
}

/** A predicate's literal as the engine printed it, read in `kind` (see the module comment). */
export function readLiteral(kind: ValueKind, text: string): Value | undefined {
  let t = text.trim();
  const typed = /^(?:DATE|TIMESTAMP(?:_NTZ)?|TIMESTAMP WITH(?:OUT)? TIME ZONE)\s+('.*')$/i.exec(t);
  if (typed?.[1]) t = typed[1];
  if (t.length >= 2 && t.startsWith("'") && t.endsWith("'")) t = t.slice(1, -1).replaceAll("''", "'");
  if (kind === "number") t = t.replace(/(?<=\d)(?:BD|[LSYDF])$/i, "");
  return readValue(kind, t);
}

function readNumber(text: string): Decimal | undefined {
  const m = NUMBER.exec(text);
  if (!m) return undefined;
  const [, sign = "", whole = "", frac = "", exp = "0"] = m;
  if (whole === "" && frac === "") return undefined;
  const digits = BigInt(`${whole}${frac}` || "0");
  const s = frac.length - Number(exp);
  const mantissa = sign === "-" ? -digits : digits;
  return s >= 0 ? { m: mantissa, s } : { m: mantissa * 10n ** BigInt(-s), s: 0 };
}

function readDate(text: string): bigint | undefined {
  // A timestamp at midnight names a day; any other time does not.
  const day =
    DATE.exec(text) ?? DATE.exec(text.replace(/[T ]00:00(?::00(?:\.0+)?)?(?:Z|\+00(?::?00)?)?$/i, ""));
  if (!day) return undefined;
  const ms = utc(Number(day[1]), Number(day[2]), Number(day[3]));
  return ms === undefined ? undefined : BigInt(ms / DAY_MS);
}

function readTimestamp(text: string): bigint | undefined {
  const t = TIMESTAMP.exec(text);
  if (!t) return undefined;
  const [, y, mo, d, h = "0", mi = "0", s = "0", frac = "", zone = ""] = t;
  const day = utc(Number(y), Number(mo), Number(d));
  if (day === undefined || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60) return undefined;
  const micros =
    BigInt(day + ((Number(h) * 60 + Number(mi)) * 60 + Number(s)) * 1000) * 1000n +
    BigInt(frac.padEnd(9, "0").slice(0, 6));
  return micros - BigInt(zoneMinutes(zone)) * 60_000_000n;
}

/** Milliseconds of a UTC date, undefined for a date that does not exist (`2023-02-29`). */
function utc(year: number, month: number, day: number): number | undefined {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.getTime();
}

function zoneMinutes(zone: string): number {
  const z = /^([+-])(\d{2}):?(\d{2})?$/.exec(zone);
  if (!z) return 0;
  const minutes = Number(z[2]) * 60 + Number(z[3] ?? 0);
  return z[1] === "-" ? -minutes : minutes;
}

/** -1, 0 or 1 as `a` sorts before, with or after `b` (both of `kind`). */
export function compareValues(kind: ValueKind, a: Value, b: Value): number {
  if (kind === "number") {
    const x = a as Decimal;
    const y = b as Decimal;
    const s = Math.max(x.s, y.s);
    const l = x.m * 10n ** BigInt(s - x.s);
    const r = y.m * 10n ** BigInt(s - y.s);
    return l < r ? -1 : l > r ? 1 : 0;
  }
  if (kind === "string") return compareCodePoints(a as string, b as string);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Code point order (UTF-16 code unit order differs above U+FFFF). */
function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) as number;
    const y = b.codePointAt(i) as number;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
