/**
 * What a `discovery` job writes (`@lakesmith/shared/discovery`): its parts while it runs, and its
 * end, in the batch that ends it. Every statement names the attempt and holds only while the job is
 * the attempt's current one (`job_id`), so a paused, restarted or completed attempt ignores a job it
 * has let go of, and a deleted location's job writes nothing.
 *
 * Parts, each applied once and in order (`jobs/parts.ts`, guarded by `fresh`):
 * - `plan`: the report's bins (pending); the attempt `running`, its report, bins and bytes.
 * - `start`: the bin `reading` (a skipped or done bin stays as it is).
 * - `rows`: upserts the bin's per-prefix aggregates by (attempt, bin, prefix), only while the bin is
 *   `reading`: a bin read again replaces its rows, so aggregates are idempotent per bin.
 * - `done`: the bin `done` with its totals, added once to the attempt's live counts.
 * - Every ack (`DiscoveryAck`): go on while the attempt is `running`; the skipped bins.
 *
 * End (`finalize`): the merged aggregates of the bins done become the attempt's discovered
 * prefixes, each judged in this order: `claimed` (within a registered or synced catalog table),
 * `too_young` (its newest object is younger than the skip age), `empty` (no bytes), `no_data_files`,
 * `below_min_size` (its data files' bytes under the minimum). Survivors are upserted as managed
 * prefixes (present, with their stats); when every bin was read, the location's present prefixes
 * the attempt did not see at all become `missing`. The location becomes Active with
 * `last_discovered_at`; older attempts' discovered prefixes and this one's aggregates are dropped.
 * A failed or cancelled job ends an attempt still queued or running the same way; a stopped job
 * (paused) leaves the attempt as the request set it.
 */

import {
  type DiscoveryAck,
  DiscoveryPartSchema,
  type DiscoveryPayload,
  DiscoveryPayloadSchema,
  DiscoveryResultSchema,
} from "@lakesmith/shared/discovery";
import { locationKey } from "@lakesmith/shared/locations";
import { and, asc, eq, inArray, ne, type SQL, sql } from "drizzle-orm";
import type { Db } from "../../db/index.ts";
import { insertSelect } from "../../db/insert-select.ts";
import {
  discoveredPrefixes,
  discoveryAggregates,
  discoveryBins,
  discoverySchedules,
  locations,
  prefixes,
} from "../../db/schema.ts";
import { issueSummary } from "../../http/problem.ts";
import type { BatchItem, FinishHook, PartHook } from "../../jobs/kinds.ts";

const DAY_MS = 86_400_000;
const prefixId = sql`'pfx_' || lower(hex(randomblob(10)))`;

/** Holds while `jobId` is the current job of the attempt (its parts count only while it is queued or running). */
const current = (attemptId: string, jobId: string, statuses = sql`('queued', 'running')`) =>
  sql`exists (select 1 from ${discoverySchedules} where ${discoverySchedules.id} = ${attemptId} and ${discoverySchedules.jobId} = ${jobId} and ${discoverySchedules.status} in ${statuses})`;

/** The part hook of `discovery` jobs. */
export const recordDiscoveryPart: PartHook = async ({ db, clock }, job, part, fresh) => {
  const payload = DiscoveryPayloadSchema.safeParse(job.payload);
  if (!payload.success) return { invalid: "the job's payload names no discovery attempt" };
  const parsed = DiscoveryPartSchema.safeParse(part);
  if (!parsed.success)
    return {
      invalid: `not a discovery part (${issueSummary(parsed.error, "(part)", 3)})`,
    };
  const attemptId = payload.data.attempt_id;
  const guard = and(fresh, current(attemptId, job.id)) as SQL;
  const now = clock.now();
  const p = parsed.data;
  const bin = (id: string) => and(eq(discoveryBins.attemptId, attemptId), eq(discoveryBins.binId, id));
  const statements: BatchItem[] = [];
  if (p.type === "plan") {
    statements.push(
      insertSelect(
        db,
        discoveryBins,
        {
          attemptId: sql`${attemptId}`,
          binId: sql`json_extract(b.value, '$.id')`,
          position: sql`(select count(*) from ${discoveryBins} x where x.attempt_id = ${attemptId}) + b.key`,
          key: sql`json_extract(b.value, '$.key')`,
          size: sql`json_extract(b.value, '$.size')`,
          status: sql`'pending'`,
          files: sql`null`,
          bytes: sql`null`,
        },
        sql`from json_each(${JSON.stringify(p.bins)}) b where ${guard}`,
      ).onConflictDoNothing(),
      db
        .update(discoverySchedules)
        .set({
          status: sql`case when ${discoverySchedules.status} = 'queued' then 'running' else ${discoverySchedules.status} end`,
          report: p.report,
          binsTotal: p.bins_total,
          totalBytes: sql`(select coalesce(sum(size), 0) from ${discoveryBins} where attempt_id = ${attemptId})`,
          startedAt: sql`coalesce(${discoverySchedules.startedAt}, ${now.getTime()})`,
          updatedAt: now,
        })
        .where(and(eq(discoverySchedules.id, attemptId), guard)),
    );
  } else if (p.type === "start") {
    statements.push(
      db
        .update(discoveryBins)
        .set({ status: "reading" })
        .where(and(bin(p.bin), inArray(discoveryBins.status, ["pending", "reading"]), guard)),
    );
  } else if (p.type === "rows" && p.rows.length > 0) {
    const field = (name: string) => sql`json_extract(r.value, ${`$.${name}`})`;
    statements.push(
      insertSelect(
        db,
        discoveryAggregates,
        {
          attemptId: sql`${attemptId}`,
          binId: sql`${p.bin}`,
          prefix: field("prefix"),
          files: field("files"),
          bytes: field("bytes"),
          dataFiles: field("data_files"),
          dataBytes: field("data_bytes"),
          oldestAt: field("oldest_ms"),
          newestAt: field("newest_ms"),
        },
        sql`from json_each(${JSON.stringify(p.rows)}) r where ${guard}
          and exists (select 1 from ${discoveryBins} b where b.attempt_id = ${attemptId} and b.bin_id = ${p.bin} and b.status = 'reading')`,
      ).onConflictDoUpdate({
        target: [discoveryAggregates.attemptId, discoveryAggregates.binId, discoveryAggregates.prefix],
        set: {
          files: sql`excluded.files`,
          bytes: sql`excluded.bytes`,
          dataFiles: sql`excluded.data_files`,
          dataBytes: sql`excluded.data_bytes`,
          oldestAt: sql`excluded.oldest_at`,
          newestAt: sql`excluded.newest_at`,
        },
      }),
    );
  } else if (p.type === "done") {
    const reading = sql`exists (select 1 from ${discoveryBins} b where b.attempt_id = ${attemptId} and b.bin_id = ${p.bin} and b.status = 'reading')`;
    statements.push(
      db
        .update(discoverySchedules)
        .set({
          binsDone: sql`${discoverySchedules.binsDone} + 1`,
          doneBinBytes: sql`${discoverySchedules.doneBinBytes} + (select size from ${discoveryBins} b where b.attempt_id = ${attemptId} and b.bin_id = ${p.bin})`,
          filesSeen: sql`${discoverySchedules.filesSeen} + ${p.files}`,
          bytesSeen: sql`${discoverySchedules.bytesSeen} + ${p.bytes}`,
          objectsScanned: sql`${discoverySchedules.objectsScanned} + ${p.scanned}`,
          updatedAt: now,
        })
        .where(and(eq(discoverySchedules.id, attemptId), guard, reading)),
      db
        .update(discoveryBins)
        .set({ status: "done", files: p.files, bytes: p.bytes })
        .where(and(bin(p.bin), eq(discoveryBins.status, "reading"), guard)),
    );
  }
  return { statements, reply: () => ackFor(db, attemptId, job.id, p.type === "start" ? p.bin : undefined) };
};

/**
 * The answer to a part: go on while the attempt runs this job; the bins skipped; for a `start`, whether
 * the bin was read already (a retried job's payload predates the bins its last lease finished).
 */
async function ackFor(db: Db, attemptId: string, jobId: string, started?: string): Promise<DiscoveryAck> {
  const [attempt] = await db
    .select({ status: discoverySchedules.status, jobId: discoverySchedules.jobId })
    .from(discoverySchedules)
    .where(eq(discoverySchedules.id, attemptId));
  const skipped = await db
    .select({ binId: discoveryBins.binId })
    .from(discoveryBins)
    .where(and(eq(discoveryBins.attemptId, attemptId), eq(discoveryBins.status, "skipped")))
    .orderBy(asc(discoveryBins.position));
  const [bin] = started
    ? await db
        .select({ status: discoveryBins.status })
        .from(discoveryBins)
        .where(and(eq(discoveryBins.attemptId, attemptId), eq(discoveryBins.binId, started)))
    : [];
  return {
    go_on: attempt?.status === "running" && attempt.jobId === jobId,
    skip_bins: skipped.map((s) => s.binId),
    ...(bin?.status === "done" ? { read_already: true } : {}),
  };
}

/** The finish hook of `discovery` jobs. */
export const recordDiscovery: FinishHook = ({ db, clock }, job, end, ended) => {
  const payload = DiscoveryPayloadSchema.safeParse(job.payload);
  if (!payload.success) return [];
  const { attempt_id: attemptId } = payload.data;
  const now = clock.now();
  const mine = and(ended, current(attemptId, job.id)) as SQL;
  if (end.status === "succeeded") {
    const result = DiscoveryResultSchema.safeParse(end.result);
    if (result.success && result.data.stopped) return [];
    return finalize(db, payload.data, now, mine);
  }
  const status = end.status === "failed" ? "failed" : "cancelled";
  return [
    db
      .update(discoverySchedules)
      .set({ status, error: end.error, endedAt: now, updatedAt: now })
      .where(and(eq(discoverySchedules.id, attemptId), mine)),
    ...settleLocation(db, payload.data.location_id, now, sql`${ended}`),
  ];
};

/** A location left Discovering by an attempt that ended without a result goes back to what it was. */
export function settleLocation(db: Db, locationId: string, now: Date, guard: SQL): BatchItem[] {
  return [
    db
      .update(locations)
      .set({
        status: sql`case when ${locations.lastDiscoveredAt} is null then 'Pending' else 'Active' end`,
        updatedAt: now,
      })
      .where(
        and(
          eq(locations.id, locationId),
          eq(locations.status, "Discovering"),
          guard,
          sql`not exists (select 1 from ${discoverySchedules} d where d.location_id = ${locationId} and d.status in ('queued', 'running', 'paused'))`,
        ),
      ),
  ];
}

/**
 * The statements that complete an attempt from the aggregates of its bins done (the header's
 * "End"), each guarded by `guard`, which must hold until the last one runs (it may not test the
 * attempt's status: the last statements change it).
 */
export function finalize(db: Db, payload: DiscoveryPayload, now: Date, guard: SQL): BatchItem[] {
  const { attempt_id: attemptId, location_id: locationId } = payload;
  const base = locationKey(payload.location_uri);
  const youngAfter = now.getTime() - payload.skip_age_days * DAY_MS;
  const claimed = JSON.stringify(payload.claimed);
  const key = sql`${base} || a.prefix`;
  const doneBins = sql`select bin_id from ${discoveryBins} where attempt_id = ${attemptId} and status = 'done'`;
  const allRead = sql`not exists (select 1 from ${discoveryBins} where attempt_id = ${attemptId} and status != 'done')
    and exists (select 1 from ${discoverySchedules} where id = ${attemptId} and bins_total = (select count(*) from ${discoveryBins} where attempt_id = ${attemptId}))`;
  return [
    db.delete(discoveredPrefixes).where(and(eq(discoveredPrefixes.attemptId, attemptId), guard)),
    insertSelect(
      db,
      discoveredPrefixes,
      {
        attemptId: sql`${attemptId}`,
        locationId: sql`${locationId}`,
        prefix: sql`a.prefix`,
        uri: sql`rtrim(${key}, '/')`,
        files: sql`sum(a.files)`,
        bytes: sql`sum(a.bytes)`,
        dataFiles: sql`sum(a.data_files)`,
        dataBytes: sql`sum(a.data_bytes)`,
        oldestAt: sql`min(a.oldest_at)`,
        newestAt: sql`max(a.newest_at)`,
        filter: sql`case
          when exists (select 1 from json_each(${claimed}) c where substr(${key}, 1, length(c.value)) = c.value) then 'claimed'
          when max(a.newest_at) > ${youngAfter} then 'too_young'
          when sum(a.bytes) = 0 then 'empty'
          when sum(a.data_files) = 0 then 'no_data_files'
          when sum(a.data_bytes) < ${payload.min_prefix_bytes} then 'below_min_size'
        end`,
      },
      sql`from ${discoveryAggregates} a where a.attempt_id = ${attemptId} and a.bin_id in (${doneBins}) and ${guard}
        group by a.prefix`,
    ),
    insertSelect(
      db,
      prefixes,
      {
        id: prefixId,
        locationId: sql`${locationId}`,
        uri: sql`d.uri`,
        managementState: sql`'unmanaged'`,
        stateReason: sql`null`,
        sourceState: sql`'present'`,
        missingSince: sql`null`,
        files: sql`d.files`,
        bytes: sql`d.bytes`,
        newestObjectAt: sql`d.newest_at`,
        discoveredAt: sql`${now.getTime()}`,
        createdAt: sql`${now.getTime()}`,
        updatedAt: sql`${now.getTime()}`,
      },
      sql`from ${discoveredPrefixes} d where d.attempt_id = ${attemptId} and d.filter is null and ${guard}`,
    ).onConflictDoUpdate({
      target: prefixes.uri,
      set: {
        locationId: sql`excluded.location_id`,
        sourceState: sql`'present'`,
        missingSince: sql`null`,
        files: sql`excluded.files`,
        bytes: sql`excluded.bytes`,
        newestObjectAt: sql`excluded.newest_object_at`,
        discoveredAt: sql`excluded.discovered_at`,
        updatedAt: sql`excluded.updated_at`,
      },
      // A prefix of another live location stays with it; one kept from a deleted location is taken back.
      setWhere: sql`${prefixes.locationId} is null or ${prefixes.locationId} = excluded.location_id`,
    }),
    db
      .update(prefixes)
      .set({ sourceState: "missing", missingSince: now, updatedAt: now })
      .where(
        and(
          eq(prefixes.locationId, locationId),
          eq(prefixes.sourceState, "present"),
          sql`${prefixes.uri} not in (select uri from ${discoveredPrefixes} where attempt_id = ${attemptId})`,
          sql`${allRead}`,
          guard,
        ),
      ),
    db
      .delete(discoveredPrefixes)
      .where(
        and(
          eq(discoveredPrefixes.locationId, locationId),
          ne(discoveredPrefixes.attemptId, attemptId),
          guard,
        ),
      ),
    db.delete(discoveryAggregates).where(and(eq(discoveryAggregates.attemptId, attemptId), guard)),
    db
      .update(locations)
      .set({
        status: sql`case when ${locations.status} in ('Pending', 'Discovering') then 'Active' else ${locations.status} end`,
        lastDiscoveredAt: now,
        updatedAt: now,
      })
      .where(and(eq(locations.id, locationId), guard)),
    db
      .update(discoverySchedules)
      .set({ status: "completed", endedAt: now, updatedAt: now })
      .where(and(eq(discoverySchedules.id, attemptId), guard)),
  ];
}
