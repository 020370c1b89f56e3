/**
 * Streams Spark event logs from an object store and yields, per SQL execution, the scans its plan
 * ran: the plan of `SparkListenerSQLExecutionStart`, replaced by each
 * `SparkListenerSQLAdaptiveExecutionUpdate` (AQE re-plans; the last plan is what ran), with the
 * execution's duration (start to `SparkListenerSQLExecutionEnd`) and the bytes its scans read (their
 * bytes-read metrics, from `SparkListenerDriverAccumUpdates` and task ends). SQL text is never read.
 *
 * Rules: one line at a time, and only the lines of the events above are parsed (task starts, stage
 * events and the rest are skipped by their prefix), so memory follows the longest line and the
 * executions still open, not the log's size. A line that is not an event (truncated, not JSON, a
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
].map((name) => Buffer.from(`{"Event":"${name}"`));

const TASK_END = Buffer.from('{"Event":"SparkListenerTaskEnd"');
const EVENT = Buffer.from('{"Event":"');
const ID = Buffer.from('{"ID":');
const UPDATE = Buffer.from('"Update":');

/** Whether `line` starts with `prefix`. */
const startsWith = (line: Buffer, prefix: Buffer) =>
  line.byteLength >= prefix.byteLength &&
  line.compare(prefix, 0, prefix.byteLength, 0, prefix.byteLength) === 0;

/**
 * Adds a task end's updates of the accumulators open executions watch. Task ends are most of a
 * log's bytes and hold nothing else the reader wants, so they are never decoded or parsed: their
 * accumulables, as Spark writes them (`{"ID":12,"Name":"…","Update":345,…}`; the name may be
 * absent, the update a number or a quoted number), are found in the bytes, and only a watched one's
 * update is read.
 */
function addTaskUpdates(line: Buffer, byAccumulator: Map<number, Open>): void {
  if (byAccumulator.size === 0) return;
  for (let at = line.indexOf(ID); at !== -1; ) {
    let i = at + ID.byteLength;
    let id = 0;
    for (let c = line[i] ?? 0; c >= 48 && c <= 57; c = line[++i] ?? 0) id = id * 10 + c - 48;
    const next = line.indexOf(ID, i);
    const open = byAccumulator.get(id);
    if (open) {
      const update = line.indexOf(UPDATE, i);
      if (update !== -1 && (next === -1 || update < next))
        addBytes(open, numberAt(line, update + UPDATE.byteLength));
    }
    at = next;
  }
}

/** The number written at `start` (quoted or not), as text. */
function numberAt(line: Buffer, start: number): string {
  const from = line[start] === 34 ? start + 1 : start;
  let end = from;
  for (
    let c = line[end] ?? 0;
    c !== 44 && c !== 125 && c !== 34 && end < line.byteLength;
    c = line[++end] ?? 0
  );
  return line.toString("latin1", from, end);
}

interface Open {
  execution: SparkExecution;
  started: number;
  accumulators: Set<number>;
  bytes: number;
  sawBytes: boolean;
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

const byCodec: PartDecoder = (source, key) => decompress(source, codecOf(key), key);

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
      if (startsWith(line, TASK_END)) {
        addTaskUpdates(line, byAccumulator);
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
  const id = event.executionId;
  if (typeof id !== "number") return "malformed";
  if (name.endsWith("DriverAccumUpdates")) {
    const updates = event.accumUpdates;
    if (!Array.isArray(updates)) return "malformed";
    for (const u of updates) if (Array.isArray(u)) addBytes(byAccumulator.get(u[0]), u[1]);
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
      bytes: 0,
      sawBytes: false,
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

function addBytes(o: Open | undefined, value: unknown): void {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  if (!o || !Number.isFinite(n)) return;
  o.bytes += n;
  o.sawBytes = true;
}

function finish(o: Open): SparkExecution {
  if (o.sawBytes) o.execution.bytesRead = o.bytes;
  if (Number.isNaN(o.execution.durationMs)) o.execution.durationMs = undefined;
  return o.execution;
}
