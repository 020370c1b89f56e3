/**
 * The run's window: whole UTC days `start` to `end` (`YYYY-MM-DD`, both included). A query is in it
 * when the UTC day it started is; a query whose log gives no start time is kept (it can't be shown
 * to lie outside), counted in the totals, but in no day of a filter set's per-day volume.
 */
import { utcDay } from "@lakesmith/shared/optimus";

export interface AnalysisWindow {
  start: string;
  end: string;
}

/** Whether a query started at `at` belongs to the window (true when `at` is unknown). */
export function inWindow(window: AnalysisWindow, at: Date | undefined): boolean {
  const day = dayOf(at);
  return day === undefined || (day >= window.start && day <= window.end);
}

/** The UTC day of `at`, or undefined for no (or an invalid) time. */
export function dayOf(at: Date | undefined): string | undefined {
  return at && !Number.isNaN(at.getTime()) ? utcDay(at) : undefined;
}
