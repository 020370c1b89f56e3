/**
 * The outbox protocol. Every notification is a row of `notifications`, written durably with its
 * event (a job's failure in the batch that ends the job; a report by the tick that finds its period
 * due) and delivered later by the dispatcher, never on a request's path.
 *
 * - Exactly one row per event and channel: `dedupe_key` is unique and every insert is
 *   `ON CONFLICT DO NOTHING`, so a finish hook run twice, two ticks or two control planes write one.
 * - new -> pending: the dispatcher reads the addressees from the settings (`expand`), guarded by
 *   `status = 'new'`; a chat row becomes one row per webhook (`fanned_out`).
 * - Claim: one UPDATE moves due rows (pending and `next_attempt_at <= now`, or sending with a lapsed
 *   claim) to sending with this dispatcher's id and `attempts + 1`; the WHERE is restated outside
 *   the subquery, so a row another control plane claimed first is not taken again.
 * - Settle: sent; or back to pending after `retryDelayMs(attempts)`; or failed after
 *   `MAX_ATTEMPTS`, keeping the last error. Each settle is guarded by the claim (`claimed_by`).
 * - A dispatcher that dies mid-send leaves its claim to lapse (`CLAIM_MS`); the row is sent again:
 *   delivery is at least once, and twice only across such a crash.
 * - No transport (no mailer in this runtime, no chat webhook in the settings): the row waits
 *   (`waiting_for_transport`, the reason in `last_error`, no try counted) under its dedupe key. A
 *   dispatcher that has the transport moves it back to new (`wakeWaiting`), so it is expanded and
 *   sent once like any row; after `TRANSPORT_WAIT_MS` without one it is skipped (`expireWaiting`).
 */
import { newId } from "@lakesmith/shared";
import { and, eq, gt, inArray, lte, or, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { insertSelect } from "../db/insert-select.ts";
import { type Job, type Notification, type NotificationChannel, notifications } from "../db/schema.ts";

/** Tries before a row is given up (failed). */
export const MAX_ATTEMPTS = 6;
/** How long a claim holds a row before another dispatcher may take it. */
export const CLAIM_MS = 120_000;
/** How long a row waits for a transport, from its creation, before it is skipped. */
export const TRANSPORT_WAIT_MS = 7 * 24 * 3_600_000;

/**
 * Wait after the `attempts`-th failed try: 30 s, 2 min, 8 min, 32 min, 2 h 8 min (x4 each time,
 * at most 6 h); the sixth failure gives up.
 */
export function retryDelayMs(attempts: number): number {
  return Math.min(30_000 * 4 ** Math.max(0, attempts - 1), 6 * 3_600_000);
}

/** The dedupe key of a job failure's row on `channel`. */
export const failureKey = (jobId: string, channel: NotificationChannel) => `job-failed:${jobId}:${channel}`;

/**
 * The rows announcing a job's failure, for the batch that ends it: an email and a chat event, each
 * written only if `ended` holds (the job really failed in that batch).
 */
export function failureStatements(db: Db, job: Job, ended: SQL, now: Date) {
  return (["email", "chat"] as const).map((channel) =>
    insertSelect(
      db,
      notifications,
      {
        id: sql`${newId("ntf")}`,
        dedupeKey: sql`${failureKey(job.id, channel)}`,
        kind: sql`'job_failed'`,
        channel: sql`${channel}`,
        status: sql`'new'`,
        jobId: sql`${job.id}`,
        period: sql`null`,
        target: sql`null`,
        targetLabel: sql`null`,
        recipients: sql`null`,
        content: sql`null`,
        attempts: sql`0`,
        nextAttemptAt: sql`${now.getTime()}`,
        claimedBy: sql`null`,
        claimExpiresAt: sql`null`,
        lastError: sql`null`,
        createdAt: sql`${now.getTime()}`,
        updatedAt: sql`${now.getTime()}`,
        sentAt: sql`null`,
      },
      sql`where ${ended}`,
    ).onConflictDoNothing(),
  );
}

/** Claims up to `limit` due rows for `owner`; see the header. */
export async function claimDue(db: Db, owner: string, now: Date, limit: number): Promise<Notification[]> {
  const due = or(
    and(eq(notifications.status, "pending"), lte(notifications.nextAttemptAt, now)),
    and(eq(notifications.status, "sending"), lte(notifications.claimExpiresAt, now)),
  );
  const ids = db.select({ id: notifications.id }).from(notifications).where(due).limit(limit);
  return db
    .update(notifications)
    .set({
      status: "sending",
      claimedBy: owner,
      claimExpiresAt: new Date(now.getTime() + CLAIM_MS),
      attempts: sql`${notifications.attempts} + 1`,
      updatedAt: now,
    })
    .where(and(inArray(notifications.id, ids), due))
    .returning();
}

const claimed = (row: Notification, owner: string) =>
  and(eq(notifications.id, row.id), eq(notifications.status, "sending"), eq(notifications.claimedBy, owner));

/** The claimed row was delivered. */
export async function markSent(db: Db, row: Notification, owner: string, now: Date): Promise<void> {
  await db
    .update(notifications)
    .set({ status: "sent", sentAt: now, claimedBy: null, claimExpiresAt: null, updatedAt: now })
    .where(claimed(row, owner));
}

/** The claimed row's try failed: pending again after the backoff, or failed after the last try. */
export async function markFailedTry(db: Db, row: Notification, owner: string, now: Date, error: string) {
  const giveUp = row.attempts >= MAX_ATTEMPTS;
  await db
    .update(notifications)
    .set({
      status: giveUp ? "failed" : "pending",
      lastError: giveUp ? `${error} (gave up after ${row.attempts} tries)` : error,
      nextAttemptAt: new Date(now.getTime() + (giveUp ? 0 : retryDelayMs(row.attempts))),
      claimedBy: null,
      claimExpiresAt: null,
      updatedAt: now,
    })
    .where(claimed(row, owner));
}

/** Nothing can be sent for the row (no addressee, no transport): skipped, with why. */
export async function markSkipped(db: Db, row: Notification, now: Date, why: string, guard: SQL) {
  await db
    .update(notifications)
    .set({ status: "skipped", lastError: why, claimedBy: null, claimExpiresAt: null, updatedAt: now })
    .where(and(eq(notifications.id, row.id), guard));
}

/** No transport for the row: it waits for one, with why; a claimed row's try is not counted. */
export async function markWaiting(db: Db, row: Notification, now: Date, why: string, guard: SQL) {
  const claimedTry = row.status === "sending" ? 1 : 0;
  await db
    .update(notifications)
    .set({
      status: "waiting_for_transport",
      attempts: row.attempts - claimedTry,
      lastError: why,
      claimedBy: null,
      claimExpiresAt: null,
      updatedAt: now,
    })
    .where(and(eq(notifications.id, row.id), guard));
}

const waiting = eq(notifications.status, "waiting_for_transport");

/** Rows waiting for a transport on `channels` (which this dispatcher now has) become new again. */
export async function wakeWaiting(db: Db, channels: NotificationChannel[], now: Date): Promise<number> {
  if (channels.length === 0) return 0;
  const woken = await db
    .update(notifications)
    .set({ status: "new", lastError: null, updatedAt: now })
    .where(
      and(
        waiting,
        inArray(notifications.channel, channels),
        gt(notifications.createdAt, new Date(now.getTime() - TRANSPORT_WAIT_MS)),
      ),
    )
    .returning({ id: notifications.id });
  return woken.length;
}

/** Rows that waited `TRANSPORT_WAIT_MS` for a transport are skipped, keeping why. */
export async function expireWaiting(db: Db, now: Date): Promise<number> {
  const expired = await db
    .update(notifications)
    .set({
      status: "skipped",
      lastError: sql`${`no transport within ${TRANSPORT_WAIT_MS / 86_400_000} days: `} || coalesce(${notifications.lastError}, '')`,
      updatedAt: now,
    })
    .where(and(waiting, lte(notifications.createdAt, new Date(now.getTime() - TRANSPORT_WAIT_MS))))
    .returning({ id: notifications.id });
  return expired.length;
}
