/**
 * Dates and times as Iceberg stores them (days since 1970-01-01; microseconds or nanoseconds since
 * midnight or since the epoch, UTC), converted to and from ISO-8601 text without `Date`, so values
 * far outside `Date`'s range and sub-millisecond digits survive.
 *
 * - Civil-date arithmetic is Howard Hinnant's `days_from_civil`/`civil_from_days` (proleptic
 *   Gregorian, exact for every int32 day).
 * - Text follows Java's `LocalDate`/`LocalTime`/`LocalDateTime` `toString`, as Iceberg's reference
 *   implementation prints values: seconds are left out when they and the fraction are zero, and the
 *   fraction has 3, 6 or 9 digits, as few as show it exactly.
 */
import { IcebergError } from "./errors.ts";

export const MICROS_PER_DAY = 86_400_000_000n;
export const MICROS_PER_HOUR = 3_600_000_000n;

export interface CivilDate {
  year: number;
  month: number;
  day: number;
}

/** Days since 1970-01-01 of a proleptic Gregorian date. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = year - (month <= 2 ? 1 : 0);
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The proleptic Gregorian date of a day number. */
export function civilFromDays(days: number): CivilDate {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp + (mp < 10 ? 3 : -9);
  return {
    year: yoe + era * 400 + (month <= 2 ? 1 : 0),
    month,
    day: doy - Math.floor((153 * mp + 2) / 5) + 1,
  };
}

/** Integer division rounding toward negative infinity. */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

const pad = (n: number | bigint, width: number) => String(n).padStart(width, "0");

/** `2017-11-16` for day 17486. */
export function formatDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  const y = year < 0 ? `-${pad(-year, 4)}` : year > 9999 ? `+${year}` : pad(year, 4);
  return `${y}-${pad(month, 2)}-${pad(day, 2)}`;
}

/** `22:31:08`, `22:31`, `22:31:08.000001` for a time of day in units of 1/`perSecond` s. */
export function formatTime(ticks: bigint, perSecond: bigint): string {
  const totalSeconds = ticks / perSecond;
  const nanos = ((ticks % perSecond) * 1_000_000_000n) / perSecond;
  const h = totalSeconds / 3600n;
  const m = (totalSeconds / 60n) % 60n;
  const s = totalSeconds % 60n;
  let text = `${pad(h, 2)}:${pad(m, 2)}`;
  if (s !== 0n || nanos !== 0n) text += `:${pad(s, 2)}`;
  if (nanos !== 0n) {
    const digits = pad(nanos, 9);
    text += `.${nanos % 1_000_000n === 0n ? digits.slice(0, 3) : nanos % 1000n === 0n ? digits.slice(0, 6) : digits}`;
  }
  return text;
}

/** `2017-11-16T22:31:08` for a timestamp in units of 1/`perSecond` s since the epoch. */
export function formatTimestamp(ticks: bigint, perSecond: bigint): string {
  const perDay = perSecond * 86_400n;
  const days = floorDiv(ticks, perDay);
  return `${formatDate(Number(days))}T${formatTime(ticks - days * perDay, perSecond)}`;
}

const DATE = /^([+-]?\d{4,})-(\d{2})-(\d{2})$/;
const TIME = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?$/;
const OFFSET = /(Z|[+-]\d{2}:\d{2})$/;

/** Day number of an ISO date `2017-11-16`. */
export function parseDate(text: string): number {
  const m = DATE.exec(text);
  if (!m) throw new IcebergError("corrupt", `not an ISO date: '${text}'`);
  return daysFromCivil(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** Ticks (1/`perSecond` s) since midnight of an ISO time `22:31:08.123456`. */
export function parseTime(text: string, perSecond: bigint): bigint {
  const m = TIME.exec(text);
  if (!m) throw new IcebergError("corrupt", `not an ISO time: '${text}'`);
  const seconds = BigInt(Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3] ?? 0));
  const fraction = BigInt((m[4] ?? "").padEnd(9, "0")) * perSecond;
  return seconds * perSecond + fraction / 1_000_000_000n;
}

/** Ticks since the epoch of an ISO timestamp, with or without an offset (`Z`, `+01:00`). */
export function parseTimestamp(text: string, perSecond: bigint): bigint {
  const offset = OFFSET.exec(text)?.[1];
  const local = offset ? text.slice(0, -offset.length) : text;
  const [date, time] = local.split("T");
  if (date === undefined || time === undefined)
    throw new IcebergError("corrupt", `not an ISO timestamp: '${text}'`);
  let ticks = BigInt(parseDate(date)) * 86_400n * perSecond + parseTime(time, perSecond);
  if (offset && offset !== "Z") {
    const sign = offset.startsWith("-") ? -1n : 1n;
    const minutes = BigInt(Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
    ticks -= sign * minutes * 60n * perSecond;
  }
  return ticks;
}
