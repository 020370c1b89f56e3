/**
 * Who gets what: failures go to `notification_emails`; a report to its recipients setting, or when
 * that is empty to the Active users it names (daily: Editors and Admins; weekly: everyone).
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Config } from "../config/definitions.ts";
import type { Db } from "../db/index.ts";
import { type NotificationKind, ROLES, type Role, users } from "../db/schema.ts";

const REPORT_ROLES: Record<"report_daily" | "report_weekly", readonly Role[]> = {
  report_daily: ["Editor", "Admin"],
  report_weekly: ROLES,
};

export async function recipientsOf(db: Db, kind: NotificationKind, values: Config): Promise<string[]> {
  if (kind === "job_failed") return values.notification_emails;
  const listed = kind === "report_daily" ? values.daily_report_recipients : values.weekly_report_recipients;
  if (listed.length > 0) return listed;
  const rows = await db
    .select({ email: users.email })
    .from(users)
    .where(and(eq(users.status, "active"), inArray(users.role, [...REPORT_ROLES[kind]])))
    .orderBy(asc(users.email));
  return rows.map((r) => r.email);
}

/** What an empty list means, for the row that had no one to go to. */
export function nobodyReason(kind: NotificationKind): string {
  return kind === "job_failed"
    ? "notification_emails is empty: nobody to email"
    : "no recipients: the recipients setting is empty and no Active user has a matching role";
}
