/**
 * When a policy's actions run: each action's schedule (its own, else the policy's, else daily at
 * 02:00 UTC) gives occurrences, every day or on one weekday, at a UTC time. The engine fires the
 * latest occurrence at or before a tick once, and waits for the next one after it.
 */
import { DEFAULT_SCHEDULE, type Schedule, WEEKDAYS } from "./schemas.ts";

const DAY_MS = 86_400_000;

function minutesOf(schedule: Schedule): number {
  return Number(schedule.time_utc.slice(0, 2)) * 60 + Number(schedule.time_utc.slice(3, 5));
}

/** `Date.getUTCDay` (0 = Sunday) of a weekly schedule's day. */
function weekday(schedule: Schedule): number {
  return (WEEKDAYS.indexOf(schedule.day_of_week ?? "sunday") + 1) % 7;
}

/** The latest occurrence of `schedule` at or before `at`. */
export function latestOccurrence(schedule: Schedule, at: Date): Date {
  const ms = at.getTime();
  const midnight = ms - (ms % DAY_MS);
  let t = midnight + minutesOf(schedule) * 60_000;
  if (t > ms) t -= DAY_MS;
  if (schedule.frequency === "weekly") {
    const back = (new Date(t).getUTCDay() - weekday(schedule) + 7) % 7;
    t -= back * DAY_MS;
  }
  return new Date(t);
}

/** The first occurrence of `schedule` after `at`. */
export function nextOccurrence(schedule: Schedule, at: Date): Date {
  const step = schedule.frequency === "weekly" ? 7 * DAY_MS : DAY_MS;
  return new Date(latestOccurrence(schedule, at).getTime() + step);
}

/** An action's schedule: its own, else its policy's, else the default. */
export function scheduleOf(own: Schedule | undefined, policy: Schedule | undefined): Schedule {
  return own ?? policy ?? DEFAULT_SCHEDULE;
}

/** `YYYY-MM-DD` of `at` minus `days` days, UTC. */
export function dayBefore(at: Date, days: number): string {
  return new Date(at.getTime() - days * DAY_MS).toISOString().slice(0, 10);
}
