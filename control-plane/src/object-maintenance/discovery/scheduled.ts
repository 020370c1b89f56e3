/**
 * The scheduler's discovery step (`scheduler/scheduler.ts` runs it every tick): an attempt for each
 * inventory location, not archived and with no active attempt, whose latest attempt (of any
 * trigger) began a cadence ago (daily: 24 h, weekly: 7 days), or, never discovered, that was
 * created that long ago. At most `DISCOVERIES_PER_TICK` a tick, the longest waiting first; the rest
 * are due at the next tick. Each job's dedupe key names the location and when its wait started, so
 * two ticks (or two control planes) that read the same row queue one attempt. A location archived
 * between the read and the queue is passed over.
 */
import { and, asc, eq, ne, sql } from "drizzle-orm";
import type { Db } from "../../db/index.ts";
import { discoverySchedules, locations } from "../../db/schema.ts";
import { ApiError } from "../../http/problem.ts";
import type { DiscoveryService } from "./service.ts";

const DAY_MS = 86_400_000;
const DISCOVERIES_PER_TICK = 50;

export class DiscoverySchedule {
  constructor(
    private readonly db: Db,
    private readonly discovery: DiscoveryService,
  ) {}

  /** Queues the due discoveries; returns how many. */
  async tick(now: Date): Promise<number> {
    // Qualified by hand: drizzle writes a column of the outer table unqualified, which the subquery would read as its own.
    const outer = sql.raw(`"locations"."id"`);
    const since = sql<number>`coalesce((select max(d.created_at) from ${discoverySchedules} d where d.location_id = ${outer}), ${locations.createdAt})`;
    const cadence = sql`case ${locations.discoveryCadence} when 'weekly' then ${7 * DAY_MS} else ${DAY_MS} end`;
    const due = await this.db
      .select({ location: locations, since })
      .from(locations)
      .where(
        and(
          eq(locations.discoveryMethod, "inventory_report"),
          ne(locations.status, "Archived"),
          sql`not exists (select 1 from ${discoverySchedules} d where d.location_id = ${outer} and d.status in ('queued', 'running', 'paused'))`,
          sql`${since} + ${cadence} <= ${now.getTime()}`,
        ),
      )
      .orderBy(asc(since))
      .limit(DISCOVERIES_PER_TICK);
    let queued = 0;
    for (const { location, since: waitingSince } of due) {
      try {
        const attempt = await this.discovery.queue(location, {
          trigger: "schedule",
          actor: null,
          dedupeKey: `discovery:${location.id}:${Number(waitingSince)}`,
        });
        if (attempt) queued++;
      } catch (err) {
        // Archived (or re-registered) since it was read: the next tick reads it again.
        if (!(err instanceof ApiError)) throw err;
      }
    }
    return queued;
  }
}
