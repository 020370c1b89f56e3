/**
 * The dispatcher: one `round(now)` that moves the outbox on (protocol in `outbox.ts`). It runs off
 * the request path: Node's timer (`adapter/node-server.ts`) and the Workers Cron Trigger
 * (`worker.ts`, `scheduled`) call it; any number of control planes may run it at once.
 *
 * 0. Rows waiting for a transport this dispatcher has (a mailer; a chat webhook in the settings)
 *    become new again; rows that waited `TRANSPORT_WAIT_MS` are skipped (`outbox.ts`).
 * 1. Expand up to 100 new rows: an email row gets its recipients (`recipients.ts`) and, for a
 *    failure, its words (`render.ts`); a chat row becomes one pending row per configured webhook
 *    (keyed by the webhook's fingerprint), in one batch with the parent's move to `fanned_out`.
 *    No mailer, or no webhook: the row waits for one, and the log says so once per process.
 * 2. Claim up to 20 due rows and deliver them one by one: email through the runtime's `Mailer`,
 *    chat as a JSON POST to the webhook whose fingerprint the row keeps. A row claimed by a
 *    dispatcher without a mailer (another control plane expanded it) waits, its try not counted.
 */
import { type Clock, newId } from "@lakesmith/shared";
import { and, asc, eq, type SQL } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { jobs, type Notification, type NotificationChannel, notifications } from "../db/schema.ts";
import type { BatchItem } from "../jobs/kinds.ts";
import { maskText } from "../secrets/mask.ts";
import {
  claimDue,
  expireWaiting,
  MAX_ATTEMPTS,
  markFailedTry,
  markSent,
  markSkipped,
  markWaiting,
  wakeWaiting,
} from "./outbox.ts";
import { nobodyReason, recipientsOf } from "./recipients.ts";
import { renderFailure } from "./render.ts";
import { DeliveryError, type Mailer, postJson, webhookFingerprint } from "./transport.ts";

export interface Transports {
  /** Email's way out; absent when the runtime has none configured. */
  email?: Mailer | undefined;
  /** For webhooks (tests pass a loopback-bound one; the default is the global fetch). */
  fetch?: typeof fetch;
  log?: (message: string) => void;
}

export const NO_MAILER =
  "no email transport is configured: set LAKESMITH_SMTP_URL (Node) or LAKESMITH_EMAIL_API_URL (Workers); waiting for one, see docs/notifications.md";
export const NO_WEBHOOK = "chat_webhook_urls is empty: waiting for a webhook to post to";

export interface DispatchRound {
  /** Rows that waited for a transport and are new again. */
  woken: number;
  expanded: number;
  sent: number;
  retried: number;
  failed: number;
  skipped: number;
  /** Rows put to wait for a transport. */
  waiting: number;
}

export class Dispatcher {
  /** Who claims rows: one id per dispatcher, so a settle only touches this one's claims. */
  readonly owner = newId("dsp");
  private toldNoMailer = false;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
    private readonly transports: Transports,
  ) {}

  async round(now: Date = this.clock.now()): Promise<DispatchRound> {
    const result: DispatchRound = {
      woken: 0,
      expanded: 0,
      sent: 0,
      retried: 0,
      failed: 0,
      skipped: 0,
      waiting: 0,
    };
    result.skipped += await expireWaiting(this.db, now);
    result.woken = await wakeWaiting(this.db, await this.channelsAvailable(), now);
    const fresh = await this.db
      .select()
      .from(notifications)
      .where(eq(notifications.status, "new"))
      .orderBy(asc(notifications.createdAt))
      .limit(100);
    for (const row of fresh) {
      const outcome = await this.expand(row, now);
      if (outcome) result[outcome]++;
    }
    for (const row of await claimDue(this.db, this.owner, now, 20)) {
      const outcome = await this.deliver(row, now);
      result[outcome]++;
    }
    return result;
  }

  /** The channels this dispatcher can send on now. */
  private async channelsAvailable(): Promise<NotificationChannel[]> {
    const { values } = await this.config.get();
    return [
      ...(this.transports.email ? (["email"] as const) : []),
      ...(values.chat_webhook_urls.length > 0 ? (["chat"] as const) : []),
    ];
  }

  /** Moves a new row on: expanded, skipped, waiting for a transport, or untouched (undefined). */
  private async expand(
    row: Notification,
    now: Date,
  ): Promise<"expanded" | "skipped" | "waiting" | undefined> {
    const { values } = await this.config.get();
    const isNew = eq(notifications.status, "new");
    let content = row.content;
    if (!content && row.jobId) {
      const [job] = await this.db.select().from(jobs).where(eq(jobs.id, row.jobId));
      if (job) content = renderFailure(job, values);
    }
    if (!content) {
      await markSkipped(this.db, row, now, "the job it announces no longer exists", isNew);
      return "skipped";
    }
    if (row.channel === "email") {
      if (!this.transports.email) {
        this.tellNoMailer();
        await markWaiting(this.db, row, now, NO_MAILER, isNew);
        return "waiting";
      }
      const to = await recipientsOf(this.db, row.kind, values);
      if (to.length === 0) {
        await markSkipped(this.db, row, now, nobodyReason(row.kind), isNew);
        return "skipped";
      }
      await this.db
        .update(notifications)
        .set({ status: "pending", recipients: to, content, nextAttemptAt: now, updatedAt: now })
        .where(and(eq(notifications.id, row.id), isNew));
      return "expanded";
    }
    const urls = values.chat_webhook_urls;
    if (urls.length === 0) {
      await markWaiting(this.db, row, now, NO_WEBHOOK, isNew);
      return "waiting";
    }
    // Fingerprints first: a query builder returned from an async callback would run on its own.
    const targets = await Promise.all(
      urls.map(async (url) => ({ url, target: await webhookFingerprint(url) })),
    );
    const children = targets.map(({ url, target }) =>
      this.db
        .insert(notifications)
        .values({
          id: newId("ntf"),
          dedupeKey: `${row.dedupeKey}#${target}`,
          kind: row.kind,
          channel: "chat",
          status: "pending",
          jobId: row.jobId,
          period: row.period,
          target,
          targetLabel: maskText(url),
          content,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing(),
    );
    const parent = this.db
      .update(notifications)
      .set({ status: "fanned_out", content, updatedAt: now })
      .where(and(eq(notifications.id, row.id), isNew));
    await this.db.batch([parent, ...children] as [BatchItem, ...BatchItem[]]);
    return "expanded";
  }

  private tellNoMailer(): void {
    if (!this.toldNoMailer) this.transports.log?.(`[lakesmith] notifications: ${NO_MAILER}`);
    this.toldNoMailer = true;
  }

  private async deliver(
    row: Notification,
    now: Date,
  ): Promise<"sent" | "retried" | "failed" | "skipped" | "waiting"> {
    const content = row.content;
    const mine = and(eq(notifications.status, "sending"), eq(notifications.claimedBy, this.owner)) as SQL;
    try {
      if (!content) throw new DeliveryError("the row has no content");
      if (row.channel === "email") {
        const mailer = this.transports.email;
        if (!mailer) {
          this.tellNoMailer();
          await markWaiting(this.db, row, now, NO_MAILER, mine);
          return "waiting";
        }
        await mailer.send({
          to: row.recipients ?? [],
          subject: content.subject,
          text: content.text,
          html: content.html,
        });
      } else {
        const url = await this.webhookUrl(row.target);
        if (!url) {
          await markSkipped(this.db, row, now, "the webhook was removed from chat_webhook_urls", mine);
          return "skipped";
        }
        await postJson(this.transports.fetch ?? fetch, "the webhook", url, content.chat);
      }
    } catch (err) {
      const message =
        err instanceof DeliveryError
          ? err.message
          : `unexpected ${err instanceof Error ? err.name : "error"}`;
      await markFailedTry(this.db, row, this.owner, this.clock.now(), message);
      return row.attempts >= MAX_ATTEMPTS ? "failed" : "retried";
    }
    await markSent(this.db, row, this.owner, this.clock.now());
    return "sent";
  }

  /** The configured webhook whose fingerprint is `target`; the URL never leaves the settings. */
  private async webhookUrl(target: string | null): Promise<string | undefined> {
    const { values } = await this.config.get();
    for (const url of values.chat_webhook_urls) if ((await webhookFingerprint(url)) === target) return url;
    return undefined;
  }
}
