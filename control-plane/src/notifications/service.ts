/**
 * Notifications and reports behind one object: the tick the runtimes call off the request path
 * (queue due reports, then a dispatch round), and the Admin's list, preview and send-now.
 */
import type { Clock } from "@lakesmith/shared";
import { asc, count, desc, eq } from "drizzle-orm";
import type { ConfigService } from "../config/service.ts";
import type { Db } from "../db/index.ts";
import { type Notification, notifications } from "../db/schema.ts";
import type { Page } from "../http/pagination.ts";
import { Dispatcher, type DispatchRound, type Transports } from "./dispatcher.ts";
import type { ReportPeriod } from "./render.ts";
import { Reports } from "./reports.ts";

export interface NotificationTick {
  /** Report periods queued by this tick (`daily:2026-11-26`). */
  reports: string[];
  dispatched: DispatchRound;
}

export class NotificationService {
  readonly reports: Reports;
  readonly dispatcher: Dispatcher;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    config: ConfigService,
    transports: Transports,
  ) {
    this.reports = new Reports(db, clock, config);
    this.dispatcher = new Dispatcher(db, clock, config, transports);
  }

  async tick(now: Date = this.clock.now()): Promise<NotificationTick> {
    const reports = await this.reports.tick(now);
    return { reports, dispatched: await this.dispatcher.round(now) };
  }

  /** The outbox, newest first. */
  async list(offset: number, limit: number): Promise<Page<Notification>> {
    const [items, [total]] = await Promise.all([
      this.db
        .select()
        .from(notifications)
        .orderBy(desc(notifications.createdAt), desc(notifications.id))
        .limit(limit)
        .offset(offset),
      this.db.select({ n: count() }).from(notifications),
    ]);
    return { items, total: total?.n ?? 0, offset, limit };
  }

  /** The report of the period ending now, rendered and not sent. */
  preview(period: ReportPeriod) {
    return this.reports.render(period, this.clock.now());
  }

  /** Queues the report of the period ending now and runs a dispatch round; answers its rows. */
  async sendNow(period: ReportPeriod): Promise<Notification[]> {
    const key = await this.reports.sendNow(period);
    await this.dispatcher.round();
    return this.db
      .select()
      .from(notifications)
      .where(eq(notifications.period, key))
      .orderBy(asc(notifications.createdAt), asc(notifications.dedupeKey));
  }
}
