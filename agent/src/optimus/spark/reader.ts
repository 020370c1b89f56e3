/**
 * Streams Spark event logs from an object store and yields, per SQL execution, the scans its plan
 * ran: the plan of `SparkListenerSQLExecutionStart`, replaced by each
 * `SparkListenerSQLAdaptiveExecutionUpdate` (AQE re-plans; the last plan is what ran), with the
 * execution's duration (start to `SparkListenerSQLExecutionEnd`) and the bytes its scans read (their
 * bytes-read metrics' final values). SQL text is never read.
 *
 * A metric's final value is its accumulator's as the driver holds it: the `Value` the last
 * `SparkListenerStageCompleted` that updated it reports (cumulative: driver and task updates merged,
 * failed tasks' left out, as Spark's UI shows it); for a metric no stage updated, the sum of its
 * `SparkListenerDriverAccumUpdates` (file scans' "size of files read" is set by the driver). Task ends,
 * most of a log's bytes, are never read: their updates are in the stages' totals.
 *
 * Rules: one line at a time, and only the lines of the events above are parsed (tasks, jobs and
 * the rest are skipped by their prefix), so memory follows the longest line and the executions still
 * open, not the log's size. A line that is not an event (truncated, not JSON, a
 * plan of the wrong shape) is counted in `stats.malformedLines` and skipped; it never ends the read.
 * Executions without scans are not yielded; one still open when its log ends is yielded without a
 * duration.
 */
import type { ObjectStore } from "../../store/index.ts";
import { codecOf, decompress } from "./codec.ts";
import { type SparkLog, sparkLogs } from "./files.ts";
import { byteLinesOf } from "./lines.ts";
import { type SparkPlanInfo, type SparkScan, scansOf } from "./plan.ts";

export interface SparkExecution {
  /** The log's key (a file, or a rolling `eventlog_v2_<appid>` folder). */
  log: string;
  executionId: number;
  /** Spark's description of the call that ran it (`query72`, `show at <console>:26`). */
  description?: string;
  startedAt?: Date;
  durationMs?: number;
  /** Bytes the scans read, where the log carries the metric. */
  bytesRead?: number;
  /** Whether the scans come from an adaptive re-plan. */
  adaptive: boolean;
  scans: SparkScan[];
}

export interface SparkReadStats {
  logs: number;
  lines: number;
  malformedLines: number;
  executions: number;
}

const SQL = "org.apache.spark.sql.execution.ui.";
const WANTED = [
  `${SQL}SparkListenerSQLExecutionStart`,
  `${SQL}SparkListenerSQLAdaptiveExecutionUpdate`,
  `${SQL}SparkListenerSQLExecutionEnd`,
  `${SQL}SparkListenerDriverAccumUpdates`,
  "SparkListenerStageCompleted",
].map((name) => Buffer.from(`{"Event":"${name}"`));

const EVENT = Buffer.from('{"Event":"');

/** Whether `line` starts with `prefix`. */
const startsWith = (line: Buffer, prefix: Buffer) =>
  line.byteLength >= prefix.byteLength &&
  line.compare(prefix, 0, prefix.byteLength, 0, prefix.byteLength) === 0;

interface Open {
  execution: SparkExecution;
  started: number;
  accumulators: Set<number>;
  /** Per bytes-read accumulator: the sum of its driver updates. */
  driver: Map<number, number>;
  /** Per bytes-read accumulator: its value at the last stage completion that reported it. */
  stages: Map<number, number>;
}

/** The SQL executions with scans in every Spark event log under `prefix` of `store`. */
export async function* readSparkExecutions(
  store: ObjectStore,
  prefix = "",
  stats: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 },
): AsyncIterable<SparkExecution> {
  for await (const log of sparkLogs(store, prefix)) yield* readSparkLog(store, log, stats);
}

/** How a part's stored bytes become its text: by its codec (`decompress`), unless a reader thread decodes otherwise. */
export type PartDecoder = (source: AsyncIterable<Uint8Array>, key: string) => AsyncIterable<Uint8Array>;

/** The default: each part by the codec its name says. */
export const byCodec: PartDecoder = (source, key) => decompress(source, codecOf(key), key);

/** The SQL executions with scans in one log (its parts read in order). */
export async function* readSparkLog(
  store: ObjectStore,
  log: SparkLog,
  stats: SparkReadStats = { logs: 0, lines: 0, malformedLines: 0, executions: 0 },
  decode: PartDecoder = byCodec,
): AsyncIterable<SparkExecution> {
  stats.logs++;
  const open = new Map<number, Open>();
  const byAccumulator = new Map<number, Open>();
  for (const part of log.parts) {
    const bytes = decode(await store.read(part.key), part.key);
    for await (const line of byteLinesOf(bytes)) {
      stats.lines++;
      if (!startsWith(line, EVENT)) {
        if (line.toString("latin1").trim() !== "") stats.malformedLines++;
        continue;
      }
      if (!WANTED.some((w) => startsWith(line, w))) continue;
      const done = handle(line.toString("utf8"), log.key, open, byAccumulator);
      if (done === "malformed") stats.malformedLines++;
      else if (done) {
        stats.executions++;
        yield done;
      }
    }
  }
  for (const o of open.values()) {
    if (o.execution.scans.length === 0) continue;
    stats.executions++;
    yield finish(o);
  }
}

function handle(
  line: string,
  log: string,
  open: Map<number, Open>,
  byAccumulator: Map<number, Open>,
): SparkExecution | undefined | "malformed" {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(line);
  } catch {
    return "malformed";
  }
  const name = String(event.Event);
  if (name === "SparkListenerStageCompleted") return stageTotals(event, byAccumulator);
  const id = event.executionId;
  if (typeof id !== "number") return "malformed";
  if (name.endsWith("DriverAccumUpdates")) {
    const updates = event.accumUpdates;
    if (!Array.isArray(updates)) return "malformed";
    for (const u of updates)
      if (Array.isArray(u)) {
        const o = byAccumulator.get(u[0]);
        const n = numberOf(u[1]);
        if (o && n !== undefined) o.driver.set(u[0], (o.driver.get(u[0]) ?? 0) + n);
      }
    return undefined;
  }
  if (name.endsWith("ExecutionEnd")) {
    const o = open.get(id);
    if (!o) return undefined;
    open.delete(id);
    for (const a of o.accumulators) byAccumulator.delete(a);
    if (typeof event.time === "number") o.execution.durationMs = event.time - o.started;
    return o.execution.scans.length > 0 ? finish(o) : undefined;
  }
  const plan = event.sparkPlanInfo as SparkPlanInfo | undefined;
  if (!plan || typeof plan.nodeName !== "string") return "malformed";
  const description = typeof event.physicalPlanDescription === "string" ? event.physicalPlanDescription : "";
  const { scans, bytesReadAccumulators } = scansOf(plan, description);
  let o = open.get(id);
  if (name.endsWith("ExecutionStart") || !o) {
    const started = typeof event.time === "number" ? event.time : Number.NaN;
    o = {
      execution: {
        log,
        executionId: id,
        description: typeof event.description === "string" ? event.description : undefined,
        startedAt: Number.isNaN(started) ? undefined : new Date(started),
        adaptive: false,
        scans,
      },
      started,
      accumulators: new Set(),
      driver: new Map(),
      stages: new Map(),
    };
    open.set(id, o);
  } else {
    o.execution.scans = scans;
    o.execution.adaptive = true;
  }
  for (const a of bytesReadAccumulators) {
    o.accumulators.add(a);
    byAccumulator.set(a, o);
  }
  return undefined;
}

/** A stage's totals of the accumulators open executions watch (`Stage Info`.`Accumulables`). */
function stageTotals(
  event: Record<string, unknown>,
  byAccumulator: Map<number, Open>,
): "malformed" | undefined {
  const info = event["Stage Info"] as { Accumulables?: unknown } | undefined;
  const accumulables = info?.Accumulables;
  if (!Array.isArray(accumulables)) return info && typeof info === "object" ? undefined : "malformed";
  for (const a of accumulables as { ID?: unknown; Value?: unknown }[]) {
    if (typeof a?.ID !== "number") continue;
    const o = byAccumulator.get(a.ID);
    const n = numberOf(a.Value);
    if (o && n !== undefined) o.stages.set(a.ID, n);
  }
  return undefined;
}

/** A metric value as Spark writes it: a number, or a number in a string. */
function numberOf(value: unknown): number | undefined {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
}

function finish(o: Open): SparkExecution {
  let bytes: number | undefined;
  for (const a of o.accumulators) {
    const value = o.stages.get(a) ?? o.driver.get(a);
    if (value !== undefined) bytes = (bytes ?? 0) + value;
  }
  if (bytes !== undefined) o.execution.bytesRead = bytes;
  if (Number.isNaN(o.execution.durationMs)) o.execution.durationMs = undefined;
  return o.execution;
}
