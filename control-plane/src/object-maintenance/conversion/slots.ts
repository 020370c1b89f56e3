/**
 * When a prefix policy's conversion runs: at `convert.run_time_utc` every day (`daily`), or every
 * Monday (`weekly`, ISO weeks start on Monday). A policy version's first slot is the first one
 * after it was written; a late scheduler tick fires a missed slot once, then moves to the next
 * slot after the tick (slots it slept through are not run one by one).
 */
const DAY_MS = 86_400_000;
const MONDAY = 1;

export interface ConvertSchedule {
  cadence: "daily" | "weekly";
  run_time_utc: string;
}

/** The first slot strictly after `after`. */
export function nextSlot(schedule: ConvertSchedule, after: Date): Date {
  const [hours, minutes] = schedule.run_time_utc.split(":").map(Number) as [number, number];
  const day = new Date(Date.UTC(after.getUTCFullYear(), after.getUTCMonth(), after.getUTCDate()));
  for (let i = 0; i <= 7; i++) {
    const slot = new Date(day.getTime() + i * DAY_MS + (hours * 60 + minutes) * 60_000);
    if (slot.getTime() <= after.getTime()) continue;
    if (schedule.cadence === "weekly" && slot.getUTCDay() !== MONDAY) continue;
    return slot;
  }
  throw new Error(`no slot within a week of ${after.toISOString()} for ${JSON.stringify(schedule)}`);
}
