/**
 * The daily and weekly reports: when each period is due, its figures and words, and its outbox rows.
 *
 * - Daily: due from `report_daily_time_utc` on each UTC date; the period is the 24 hours before
 *   that time. Weekly: due from the same time on `report_weekly_day`; the 7 days before.
 * - Only the current date's period is looked at: a control plane that is down past midnight UTC
 *   misses that day's report rather than sending a stale one later.
 * - Once per period: its rows are keyed `report:<period>:<date>:<channel>` and inserted
 *   `ON CONFLICT DO NOTHING`, so a restart, a second tick or a second control plane adds nothing.
 *   The figures are read when the first tick after the send time renders them, and the rows keep
 *   the words, so every try sends the same report.
 * - A preview renders the period ending now, and a send-now queues exactly that (keyed by its own id).
 */
import { type Clock, newId } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import type { Config } from "../config/definitions.ts";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { type NotificationContent, notifications } from "../db/schema.ts";
import { reportFigures } from "./figures.ts";
import { type ReportPeriod, renderReport } from "./render.ts";

const DAY_MS = 86_400_000;
const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const LENGTH_MS: Record<ReportPeriod, number> = { daily: DAY_MS, weekly: 7 * DAY_MS };

export interface DuePeriod {
  period: ReportPeriod;
  /** The UTC date it is sent on: the period's key. */
  date: string;
  from: Date;
  to: Date;
}

/** The period of `period` due at `now`, if today's send time has passed (and it is the weekly day). */
export function duePeriod(period: ReportPeriod, now: Date, values: Config): DuePeriod | undefined {
  const midnight = now.getTime() - (now.getTime() % DAY_MS);
  const [hh, mm] = values.report_daily_time_utc.split(":").map(Number);
  const sendAt = midnight + ((hh ?? 0) * 60 + (mm ?? 0)) * 60_000;
  if (now.getTime() < sendAt) return undefined;
  if (period === "weekly" && WEEKDAYS[now.getUTCDay()] !== values.report_weekly_day) return undefined;
  return {
    period,
    date: new Date(midnight).toISOString().slice(0, 10),
    from: new Date(sendAt - LENGTH_MS[period]),
    to: new Date(sendAt),
  };
}

export const reportKey = (period: ReportPeriod, key: string, channel: string) =>
  `report:${period}:${key}:${channel}`;

export class Reports {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly config: ConfigService,
  ) {}

  /** The report of the period ending `to`. */
  async render(period: ReportPeriod, to: Date): Promise<NotificationContent> {
    const { values } = await this.config.get();
    const from = new Date(to.getTime() - LENGTH_MS[period]);
    return renderReport(period, await reportFigures(this.db, values, from, to), values);
  }

  /** Queues each report whose period is due and not yet queued; answers the periods it queued. */
  async tick(now: Date = this.clock.now()): Promise<string[]> {
    const { values } = await this.config.get();
    const queued: string[] = [];
    for (const period of ["daily", "weekly"] as const) {
      const due = duePeriod(period, now, values);
      if (!due) continue;
      const [done] = await this.db
        .select({ id: notifications.id })
        .from(notifications)
        .where(eq(notifications.dedupeKey, reportKey(period, due.date, "email")));
      if (done) continue;
      if (await this.queue(period, due.date, await this.render(period, due.to), now))
        queued.push(`${period}:${due.date}`);
    }
    return queued;
  }

  /** Queues the report of the period ending now, whatever was sent before (Admin's send-now); answers its key. */
  async sendNow(period: ReportPeriod): Promise<string> {
    const now = this.clock.now();
    const key = `now-${newId("rpt")}`;
    await this.queue(period, key, await this.render(period, now), now);
    return key;
  }

  /** An email and a chat row for the report, keyed by period; true when this call wrote them. */
  private async queue(period: ReportPeriod, key: string, content: NotificationContent, now: Date) {
    const rows = (["email", "chat"] as const).map((channel) =>
      this.db
        .insert(notifications)
        .values({
          id: newId("ntf"),
          dedupeKey: reportKey(period, key, channel),
          kind: period === "daily" ? "report_daily" : "report_weekly",
          channel,
          status: "new",
          period: key,
          content,
          nextAttemptAt: now,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoNothing()
        .returning({ id: notifications.id }),
    );
    const [email] = await this.db.batch([rows[0], rows[1]] as [(typeof rows)[0], (typeof rows)[1]]);
    return email.length > 0;
  }
}
