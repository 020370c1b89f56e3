/**
 * The outbox and the reports, for Admins (API keys: `config:read` to list and to see the next
 * report's HTML, `config:write` for the two POSTs, preview and send). A row shows how many addresses it goes to and a webhook's masked URL,
 * never the address list or a webhook's URL.
 */
import { z } from "@hono/zod-openapi";
import { access } from "../auth/access.ts";
import {
  NOTIFICATION_CHANNELS,
  NOTIFICATION_KINDS,
  NOTIFICATION_STATUSES,
  type Notification,
} from "../db/schema.ts";
import { jsonResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { MAX_ATTEMPTS, TRANSPORT_WAIT_MS } from "./outbox.ts";

const NotificationSchema = z
  .object({
    id: z.string(),
    kind: z.enum(NOTIFICATION_KINDS),
    channel: z.enum(NOTIFICATION_CHANNELS),
    status: z.enum(NOTIFICATION_STATUSES).openapi({
      description: `new: addressees not yet read from the settings; pending: due at next_attempt_at; sending: being sent; sent; failed: gave up after max_attempts tries (last_error says why); skipped: nothing could be sent (no recipient, the webhook was removed, or no transport within ${TRANSPORT_WAIT_MS / 86_400_000} days; last_error says which); waiting_for_transport: no email transport (SMTP or email API) or no chat webhook is configured yet; the row is sent, once, when one is (last_error says which); fanned_out: a chat message split into one row per webhook.`,
    }),
    job_id: z.string().nullable(),
    period: z.string().nullable().openapi({
      description: "A report's period: the UTC date it was due on, or `now-...` for a send-now.",
    }),
    subject: z.string().nullable(),
    recipients_count: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "How many addresses an email goes to; the addresses are not shown." }),
    webhook: z.string().nullable().openapi({
      description: "A chat row's webhook, masked as the setting is (`https://hooks.slack.com/••••x9Zq`).",
    }),
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    next_attempt_at: z.string().nullable(),
    last_error: z.string().nullable(),
    created_at: z.string(),
    sent_at: z.string().nullable(),
  })
  .openapi("Notification");

function view(row: Notification): z.infer<typeof NotificationSchema> {
  return {
    id: row.id,
    kind: row.kind,
    channel: row.channel,
    status: row.status,
    job_id: row.jobId,
    period: row.period,
    subject: row.content?.subject ?? null,
    recipients_count: row.recipients ? row.recipients.length : null,
    webhook: row.targetLabel,
    attempts: row.attempts,
    max_attempts: MAX_ATTEMPTS,
    next_attempt_at: row.status === "pending" ? row.nextAttemptAt.toISOString() : null,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    sent_at: row.sentAt?.toISOString() ?? null,
  };
}

const PeriodQuery = z.object({
  period: z.enum(["daily", "weekly"]).openapi({ param: { name: "period", in: "query" }, example: "daily" }),
});

const ReportPreviewSchema = z
  .object({
    period: z.enum(["daily", "weekly"]),
    subject: z.string(),
    text: z.string().openapi({ description: "The plain-text part." }),
    html: z.string().openapi({ description: "The HTML part, themed by email_theme." }),
    chat: z
      .object({ text: z.string(), blocks: z.array(z.any()).optional() })
      .openapi({ description: "The summary posted to each chat webhook." }),
  })
  .openapi("ReportPreview");

const tags = ["notifications"];

const list = defineRoute({
  method: "get",
  path: "/api/v1/notifications",
  tags,
  summary: "The notification outbox, newest first",
  description:
    "Job-failure notices and reports, one row per channel (and per webhook), with their delivery state. Tries are retried after 30 s, 2 min, 8 min, 32 min and 2 h 8 min, and given up after the sixth.",
  access: access.admin("config:read"),
  request: { query: pageQuery(50, 500) },
  responses: { 200: jsonResponse("Rows, newest first.", pageOf(NotificationSchema, "NotificationList")) },
});
const preview = defineRoute({
  method: "post",
  path: "/api/v1/reports/preview",
  tags,
  summary: "Render the report of the period ending now, sending nothing",
  access: access.admin("config:write"),
  request: { query: PeriodQuery },
  responses: { 200: jsonResponse("The report as it would be sent now.", ReportPreviewSchema) },
});
const previewPage = defineRoute({
  method: "get",
  path: "/api/v1/reports/preview",
  tags,
  summary: "The next report's HTML, as the email would show it",
  description:
    "Renders the report of the period ending now as the HTML part of its email (themed by email_theme), sending nothing: open it in a browser. " +
    "POST on the same path answers every part (subject, text, HTML, chat summary) as JSON.",
  access: access.admin("config:read"),
  request: { query: PeriodQuery },
  responses: {
    200: {
      description: "The report's HTML part.",
      content: { "text/html": { schema: z.string() } },
    },
  },
});
const send = defineRoute({
  method: "post",
  path: "/api/v1/reports/send",
  tags,
  summary: "Send the report of the period ending now",
  description:
    "Queues the report (email and chat) outside the daily or weekly schedule, which it does not replace, and runs a delivery round; answers the queued rows.",
  access: access.admin("config:write"),
  request: { query: PeriodQuery },
  responses: {
    202: jsonResponse(
      "The report's rows as they stand after the delivery round.",
      z.object({ items: z.array(NotificationSchema) }).openapi("ReportSent"),
    ),
  },
});

export const notificationRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.notifications.list(offset, limit);
    return c.json({ ...page, items: page.items.map(view) }, 200);
  })
  .openapi(preview, async (c) => {
    const { period } = c.req.valid("query");
    return c.json({ period, ...(await c.var.services.notifications.preview(period)) }, 200);
  })
  .openapi(previewPage, async (c) => {
    const { period } = c.req.valid("query");
    const { html } = await c.var.services.notifications.preview(period);
    return c.body(html, 200, { "content-type": "text/html; charset=utf-8" });
  })
  .openapi(send, async (c) => {
    const { period } = c.req.valid("query");
    const rows = await c.var.services.notifications.sendNow(period);
    return c.json({ items: rows.map(view) }, 202);
  });
