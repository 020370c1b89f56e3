/**
 * A `discovery` job (`@lakesmith/shared/discovery`): plan → per bin (ask → read → aggregate →
 * send) → counts.
 *
 * 1. Plan: the report (`report.ts`) and its bins, sent as the first part(s).
 * 2. Per bin, in the manifest's order: bins the payload marks done (an earlier lease) or skipped
 *    are passed over; a `start` part asks the plane, whose ack may say stop (paused, completed),
 *    skip the bin, or that it was read already (by this job's lost lease, before a retry). The bin's data file is read in place (`file://`) or downloaded to the scratch
 *    folder, aggregated by DuckDB (`aggregate.ts`), sent as `rows` parts, then a `done` part with
 *    its totals; its local copy is removed before the next bin. An ack that names the current bin
 *    as skipped abandons it (no `done`: its rows are dropped by the plane).
 * 3. Result: counts only.
 *
 * Memory: one bin's file on disk at a time, DuckDB under the engine's limit, and at most one
 * chunk of rows in JavaScript; nothing grows with the inventory but the plan's bin list.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  DISCOVERY_PART_ROWS,
  DISCOVERY_PLAN_BINS,
  type DiscoveryAck,
  DiscoveryAckSchema,
  type DiscoveryPart,
  type DiscoveryPayload,
  type DiscoveryResult,
  type DiscoveryRow,
} from "@lakesmith/shared/discovery";
import { locationKey, parseLocation } from "@lakesmith/shared/locations";
import { Engine } from "../engine/duckdb.ts";
import { type JobContext, JobError } from "../registry.ts";
import type { ObjectStore } from "../store/index.ts";
import { aggregateBin, claim, type ReportSource, scannedIn } from "./aggregate.ts";
import { findReport } from "./report.ts";

export interface DiscoveryOptions {
  /** Rooted at the inventory configuration's folder (`inventoryRoot`). */
  inventory: ObjectStore;
  memoryLimitMb: number;
}

export async function runDiscovery(
  ctx: JobContext<DiscoveryPayload>,
  options: DiscoveryOptions,
): Promise<DiscoveryResult> {
  const { payload } = ctx;
  const report = await findReport(options.inventory, payload.inventory_uri);
  const source = sourceOf(payload.location_uri, report.sourceBucket);
  const send = async (part: DiscoveryPart): Promise<DiscoveryAck> =>
    DiscoveryAckSchema.parse((await ctx.part(part)) ?? { go_on: true });

  const result: DiscoveryResult = {
    report: report.uri,
    bins_total: report.bins.length,
    bins_read: 0,
    bins_skipped: 0,
    bins_already_done: 0,
    objects_scanned: 0,
    files: 0,
    bytes: 0,
    prefix_rows: 0,
    stopped: false,
    incomplete_reports: report.incomplete,
  };
  const skip = new Set(payload.skip_bins);
  const done = new Set(payload.done_bins);
  const heed = (answer: DiscoveryAck) => {
    for (const bin of answer.skip_bins) skip.add(bin);
    if (!answer.go_on) result.stopped = true;
  };
  for (let i = 0; i === 0 || i < report.bins.length; i += DISCOVERY_PLAN_BINS) {
    heed(
      await send({
        type: "plan",
        report: report.uri,
        report_created_ms: report.createdMs,
        bins_total: report.bins.length,
        bins: report.bins.slice(i, i + DISCOVERY_PLAN_BINS),
      }),
    );
  }

  const engine = await Engine.open({
    memoryLimitMb: options.memoryLimitMb,
    tempDir: join(ctx.scratchDir, "duckdb"),
  });
  try {
    const relative = claimedKeys(payload);
    const claimed = await claim(engine, relative);
    for (const bin of report.bins) {
      if (result.stopped) break;
      ctx.signal.throwIfAborted();
      if (done.has(bin.id)) {
        result.bins_already_done++;
        continue;
      }
      if (!skip.has(bin.id)) {
        const answer = await send({ type: "start", bin: bin.id });
        heed(answer);
        if (answer.read_already && !result.stopped) {
          result.bins_already_done++;
          continue;
        }
      }
      if (result.stopped) break;
      if (skip.has(bin.id)) {
        result.bins_skipped++;
        continue;
      }
      const local =
        options.inventory.localFile?.(bin.key) ?? join(ctx.scratchDir, `bin-${result.bins_read}.parquet`);
      if (!options.inventory.localFile) await options.inventory.download(bin.key, local);
      try {
        const totals = { files: 0, bytes: 0, rows: 0 };
        let batch: DiscoveryRow[] = [];
        const flush = async () => {
          if (batch.length === 0) return;
          heed(await send({ type: "rows", bin: bin.id, rows: batch }));
          batch = [];
        };
        for await (const chunk of aggregateBin(engine, local, source, claimed)) {
          for (const row of chunk) {
            totals.files += row.files;
            totals.bytes += row.bytes;
            totals.rows++;
            batch.push(row);
            if (batch.length === DISCOVERY_PART_ROWS) await flush();
            if (result.stopped || skip.has(bin.id)) break;
          }
          if (result.stopped || skip.has(bin.id)) break;
        }
        if (!result.stopped && !skip.has(bin.id)) await flush();
        if (result.stopped) break;
        if (skip.has(bin.id)) {
          result.bins_skipped++;
          continue;
        }
        const scanned = await scannedIn(engine, local);
        heed(await send({ type: "done", bin: bin.id, files: totals.files, bytes: totals.bytes, scanned }));
        result.bins_read++;
        result.objects_scanned += scanned;
        result.files += totals.files;
        result.bytes += totals.bytes;
        result.prefix_rows += totals.rows;
        ctx.progress({
          bins_done: result.bins_read + result.bins_already_done,
          bins_total: report.bins.length,
        });
      } finally {
        if (!options.inventory.localFile) await rm(local, { force: true });
      }
    }
  } finally {
    engine.close();
  }
  return result;
}

/**
 * Where the location's objects are in the report. An object store's location must be in the
 * report's bucket; a `file://` location names the bucket as one of its folders (the last one with
 * the bucket's name), the keys being relative to it.
 */
export function sourceOf(locationUri: string, sourceBucket: string): ReportSource {
  const location = parseLocation(locationUri);
  if (location.scheme !== "file") {
    if (location.root.toLowerCase() !== sourceBucket.toLowerCase())
      throw new JobError(
        `the inventory report lists bucket '${sourceBucket}', but the location ${locationUri} is in '${location.root}'`,
        { retryable: false },
      );
    return { bucket: sourceBucket, keyPrefix: folderOf(location.segments) };
  }
  const at = location.segments.lastIndexOf(sourceBucket);
  if (at < 0)
    throw new JobError(
      `the inventory report lists bucket '${sourceBucket}', and no folder of the location ${locationUri} has that name`,
      { retryable: false },
    );
  return { bucket: sourceBucket, keyPrefix: folderOf(location.segments.slice(at + 1)) };
}

/** The claimed keys inside the location, relative to it (each ending with `/`). */
function claimedKeys(payload: DiscoveryPayload): string[] {
  const base = locationKey(payload.location_uri);
  return payload.claimed.filter((k) => k.startsWith(base)).map((k) => k.slice(base.length));
}

function folderOf(segments: string[]): string {
  return segments.length === 0 ? "" : `${segments.join("/")}/`;
}
