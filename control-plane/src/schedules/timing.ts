/**
 * When a daily schedule runs, as pure functions of UTC time, shared by the schedule service (which
 * sets `next_run_at`) and the scheduler tick (which fires it).
 *
 * A daily schedule has one slot per UTC date: the date's `run_time_utc`. A new or re-timed
 * schedule first runs at the next occurrence at or after now (cron semantics: one created at 10:00
 * for 02:00 first runs tomorrow). The tick (`scheduler/fire.ts`, in SQL) fires the latest slot
 * that is due, once, over `[date - lookback_start, date - lookback_end]`; slots missed while the
 * control plane was down for days are not replayed one by one.
 */

const DAY_MS = 86_400_000;

/** `HH:MM` (24-hour) as minutes after midnight. */
export function minutesOf(runTimeUtc: string): number {
  const [h, m] = runTimeUtc.split(":").map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/** The UTC date of an instant, `YYYY-MM-DD`. */
export function utcDate(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Adds whole days to a `YYYY-MM-DD` date. */
export function addDays(date: string, days: number): string {
  return utcDate(Date.parse(`${date}T00:00:00Z`) + days * DAY_MS);
}

/** The instant of a date's slot. */
export function slotInstant(date: string, runTimeUtc: string): Date {
  return new Date(Date.parse(`${date}T00:00:00Z`) + minutesOf(runTimeUtc) * 60_000);
}

/**
 * The first slot at or after `from`, skipping the date `skipSlot` (the slot that already fired, so
 * moving the time on the day of a run does not run it twice that day).
 */
export function nextOccurrence(runTimeUtc: string, from: Date, skipSlot?: string | null): Date {
  let date = utcDate(from);
  if (slotInstant(date, runTimeUtc) < from) date = addDays(date, 1);
  if (date === skipSlot) date = addDays(date, 1);
  return slotInstant(date, runTimeUtc);
}
