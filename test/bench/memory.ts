/**
 * A bench process's memory as Linux reports it (`/proc/<pid>/status`): the peak resident set
 * (`VmHWM`), which `resetPeakRss` starts again, and the anonymous resident memory now. Elsewhere
 * the figures are NaN (peak) or 0 (anonymous).
 */
import { readFileSync, writeFileSync } from "node:fs";

/** Resets a process's peak resident memory (Linux: VmHWM), so the next peak is the next step's. */
export function resetPeakRss(pid: number | undefined): void {
  try {
    if (pid) writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Not Linux: the peak is the process's whole life.
  }
}

/** Resident anonymous memory of a process now (Linux `RssAnon`: heap, not mapped files), in MB. */
export function anonRss(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/RssAnon:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Peak resident memory of a process (Linux `VmHWM`), in MB. */
export function peakRss(pid: number | undefined): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
  } catch {
    return Number.NaN;
  }
}
