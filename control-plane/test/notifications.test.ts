/**
 * Notifications and reports on Node, end to end: a job that fails for good writes its outbox rows
 * in the batch that ends it; the dispatcher sends the email to a real SMTP server on loopback and
 * posts to a loopback webhook that fails twice, retrying on the stated backoff (manual clock); the
 * daily and weekly reports reach the recipients the role rules pick, once per period; two
 * dispatchers on one database deliver once; without a transport rows wait, saying why, and are sent
 * once when a transport appears (a restart with SMTP, a webhook set), or skipped after seven days.
 */
import { ManualClock } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { smtpMailer } from "../src/adapter/node-smtp.ts";
import { type Job, jobs, notifications } from "../src/db/schema.ts";
import { NO_MAILER, NO_WEBHOOK, type Transports } from "../src/notifications/dispatcher.ts";
import { TRANSPORT_WAIT_MS } from "../src/notifications/outbox.ts";
import { NotificationService } from "../src/notifications/service.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { startSmtpReceiver, startWebhookReceiver } from "./support/mail-receivers.ts";

const DIAGNOSTIC_AGENT = { id: "agt_notify", kinds: ["noop"], capabilities: [], allow: [], endpoints: [] };
const GiB = 2 ** 30;

let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
beforeAll(async () => {
  smtp = await startSmtpReceiver();
});
afterAll(() => smtp.close());

async function admin(plane: TestPlane, method: string, path: string, body?: unknown) {
  const res = await plane.call(method, path, { token: ADMIN_KEY, body });
  const text = await res.text();
  return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
}

/** Queues a noop job, leases it to a diagnostic agent and fails it for good (or retryably). */
async function failJob(plane: TestPlane, error: string, maxAttempts = 1): Promise<Job> {
  const { jobs: service } = plane.services;
  const { job } = await service.enqueue({ kind: "noop", payload: {}, maxAttempts });
  const offered = await service.offerNext(DIAGNOSTIC_AGENT);
  expect(offered?.id).toBe(job.id);
  const acked = await service.ack(DIAGNOSTIC_AGENT.id, job.id, (offered as Job).fence);
  expect(acked.kind).toBe("done");
  const done = await service.complete(DIAGNOSTIC_AGENT.id, job.id, (offered as Job).fence, "failed", {
    error,
    retryable: true,
  });
  if (done.kind !== "done") throw new Error(`complete refused: ${done.kind}`);
  return done.job;
}

async function rowsOf(plane: TestPlane, jobId: string) {
  return plane.services.db.select().from(notifications).where(eq(notifications.jobId, jobId));
}

describe("job failure notices", () => {
  let plane: TestPlane;
  let clock: ManualClock;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const hookPath = "/services/T000/B000/very-secret-token-path";

  beforeAll(async () => {
    clock = new ManualClock(new Date("2026-11-24T12:00:00Z"));
    hook = await startWebhookReceiver(2);
    plane = await startTestPlane({
      clock,
      notifications: {
        email: smtpMailer({ host: "127.0.0.1", port: smtp.port, from: "lakesmith@example.com" }),
      },
    });
    const res = await admin(plane, "PUT", "/api/v1/config", {
      notification_emails: ["ops@example.com", "oncall@example.com"],
      chat_webhook_urls: [hook.url(hookPath)],
      // No report is due at noon: these tests see failure notices only.
      report_daily_time_utc: "23:59",
    });
    expect(res.status, res.text).toBe(200);
  });
  afterAll(async () => {
    plane.close();
    await hook.close();
  });

  it("writes no row for a failure that will be retried", async () => {
    const job = await failJob(plane, "transient", 2);
    expect(job.status).toBe("queued");
    expect(await rowsOf(plane, job.id)).toEqual([]);
    await plane.services.jobs.cancel(job.id);
  });

  it("emails notification_emails and posts to the webhook once, retrying two 500s after 30 s and 2 min", async () => {
    const before = smtp.mails.length;
    const job = await failJob(plane, "disk full <script>alert(1)</script>");
    expect(job.status).toBe("failed");
    // Written in the batch that ended the job: one email and one chat event, not yet expanded.
    const written = await rowsOf(plane, job.id);
    expect(written.map((r) => [r.channel, r.status]).sort()).toEqual([
      ["chat", "new"],
      ["email", "new"],
    ]);

    const first = await plane.services.notifications.tick();
    expect(first.dispatched).toMatchObject({ expanded: 2, sent: 1, retried: 1 });
    expect(hook.requests).toHaveLength(1);
    const chat = (await rowsOf(plane, job.id)).find((r) => r.channel === "chat" && r.target);
    expect(chat).toMatchObject({
      status: "pending",
      attempts: 1,
      lastError: "the webhook answered HTTP 500",
    });
    expect(chat?.nextAttemptAt.getTime()).toBe(clock.now().getTime() + 30_000);

    // Not yet due: nothing is posted.
    clock.advance(29_000);
    await plane.services.notifications.tick();
    expect(hook.requests).toHaveLength(1);
    clock.advance(1_000);
    await plane.services.notifications.tick();
    expect(hook.requests).toHaveLength(2);
    clock.advance(119_000);
    await plane.services.notifications.tick();
    expect(hook.requests).toHaveLength(2);
    clock.advance(1_000);
    await plane.services.notifications.tick();
    expect(hook.requests.map((r) => r.status)).toEqual([500, 500, 200]);
    clock.advance(3_600_000);
    await plane.services.notifications.tick();
    expect(hook.accepted()).toHaveLength(1);
    const posted = hook.accepted()[0]?.body as { text: string; blocks: unknown[] };
    expect(posted.text).toContain(job.id);
    expect(posted.text).toContain("disk full &lt;script&gt;");
    expect(posted.blocks).toHaveLength(1);
    expect((await rowsOf(plane, job.id)).find((r) => r.target)).toMatchObject({
      status: "sent",
      attempts: 3,
    });

    expect(smtp.mails).toHaveLength(before + 1);
    const mail = smtp.mails[before];
    expect(mail?.rcptTo.sort()).toEqual(["oncall@example.com", "ops@example.com"]);
    expect(mail?.parsed.subject).toBe(`Lakesmith: noop job ${job.id} failed`);
    expect(mail?.parsed.text).toContain("Error: disk full <script>alert(1)</script>");
    expect(mail?.parsed.text).toContain("set console_public_url");
    expect(mail?.parsed.html).toContain("disk full &#60;script&#62;alert(1)&#60;/script&#62;");
    expect(mail?.parsed.html).not.toContain("<script>");
    expect(mail?.parsed.html).not.toContain("href=");
  });

  it("shows Admins the outbox newest first, without the addresses or the webhook's URL", async () => {
    const res = await admin(plane, "GET", "/api/v1/notifications?limit=10");
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBeGreaterThanOrEqual(3);
    const email = res.body.items.find((r: { channel: string }) => r.channel === "email");
    expect(email).toMatchObject({ kind: "job_failed", status: "sent", attempts: 1, recipients_count: 2 });
    const chat = res.body.items.find((r: { webhook: string | null }) => r.webhook);
    expect(chat).toMatchObject({ status: "sent", attempts: 3, last_error: "the webhook answered HTTP 500" });
    expect(res.text).not.toContain("very-secret-token-path");
    expect(res.text).not.toContain("ops@example.com");
    const viewer = await plane.userWithRole("Viewer");
    expect((await plane.call("GET", "/api/v1/notifications", { token: viewer.token })).status).toBe(403);
  });

  it("gives up after the sixth try and keeps the last error", async () => {
    const dead = await startWebhookReceiver(100);
    await admin(plane, "PUT", "/api/v1/config", { chat_webhook_urls: [dead.url("/dead")] });
    const job = await failJob(plane, "again");
    for (const wait of [0, 30_000, 120_000, 480_000, 1_920_000, 7_680_000, 21_600_000]) {
      clock.advance(wait);
      await plane.services.notifications.tick();
    }
    expect(dead.requests).toHaveLength(6);
    const chat = (await rowsOf(plane, job.id)).find((r) => r.target);
    expect(chat).toMatchObject({ status: "failed", attempts: 6 });
    expect(chat?.lastError).toBe("the webhook answered HTTP 500 (gave up after 6 tries)");
    await dead.close();
  });
});

describe("reports", () => {
  let plane: TestPlane;
  let clock: ManualClock;
  let hook: Awaited<ReturnType<typeof startWebhookReceiver>>;
  // A Monday, at the report time.
  const sendAt = new Date("2026-11-23T06:00:00Z");

  beforeAll(async () => {
    clock = new ManualClock(sendAt);
    hook = await startWebhookReceiver(0);
    plane = await startTestPlane({
      clock,
      notifications: {
        email: smtpMailer({ host: "127.0.0.1", port: smtp.port, from: "lakesmith@example.com" }),
      },
    });
    await plane.userWithRole("Viewer", "vera");
    await plane.userWithRole("Editor", "eddie");
    await plane.userWithRole("Admin", "ada");
    const gone = await plane.userWithRole("Editor", "gone");
    expect((await admin(plane, "PATCH", `/api/v1/users/${gone.id}`, { status: "inactive" })).status).toBe(
      200,
    );
    const res = await admin(plane, "PUT", "/api/v1/config", {
      report_daily_time_utc: "06:00",
      report_weekly_day: "Monday",
      email_theme: "Dark",
      console_public_url: "https://console.example.com",
      storage_cost_usd_per_gb_month: 0.021,
      cloud_discount_percent: 20,
      projection_period_months: 12,
      chat_webhook_urls: [hook.url("/reports")],
    });
    expect(res.status, res.text).toBe(200);
    // Two crunches in the last day: 10 GiB -> 4 GiB and 2 GiB -> 1 GiB; one a week ago, outside it.
    const crunch = (id: string, tableId: string, before: number, after: number, finishedAt: Date) => ({
      id,
      kind: "crunch",
      tableId,
      payload: {},
      requires: [],
      status: "succeeded" as const,
      notBefore: finishedAt,
      finishedAt,
      // A committed rewrite (`committed_version`): what the reports and the savings count.
      result: {
        bytes_before: before,
        bytes_after: after,
        drr: 100 * (1 - after / before),
        committed_version: 7,
      },
    });
    await plane.services.db
      .insert(jobs)
      .values([
        crunch("job_r1", "tbl_a", 10 * GiB, 4 * GiB, new Date("2026-11-23T01:00:00Z")),
        crunch("job_r2", "tbl_b", 2 * GiB, 1 * GiB, new Date("2026-11-22T09:00:00Z")),
        crunch("job_r3", "tbl_a", 4 * GiB, 2 * GiB, new Date("2026-11-19T09:00:00Z")),
      ]);
  });
  afterAll(async () => {
    plane.close();
    await hook.close();
  });

  it("sends the daily and weekly reports once each to the role rules' recipients, as previewed", async () => {
    const preview = await admin(plane, "POST", "/api/v1/reports/preview?period=daily");
    expect(preview.status, preview.text).toBe(200);
    // The documented GET renders the same report's HTML for a browser.
    const page = await plane.call("GET", "/api/v1/reports/preview?period=daily", { token: ADMIN_KEY });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(await page.text()).toBe(preview.body.html);
    const before = smtp.mails.length;

    const tick = await plane.services.notifications.tick();
    expect(tick.reports.sort()).toEqual(["daily:2026-11-23", "weekly:2026-11-23"]);
    const mails = smtp.mails.slice(before);
    expect(mails).toHaveLength(2);
    const daily = mails.find((m) => m.parsed.subject?.includes("daily"));
    const weekly = mails.find((m) => m.parsed.subject?.includes("weekly"));

    const users = (await admin(plane, "GET", "/api/v1/users?limit=100")).body.items as {
      email: string;
      role: string;
      status: string;
    }[];
    const active = users.filter((u) => u.status === "active");
    expect(daily?.rcptTo.sort()).toEqual(
      active
        .filter((u) => u.role !== "Viewer")
        .map((u) => u.email)
        .sort(),
    );
    expect(daily?.rcptTo).toContain("eddie@example.com");
    expect(daily?.rcptTo).not.toContain("vera@example.com");
    expect(daily?.rcptTo).not.toContain("gone@example.com");
    expect(weekly?.rcptTo.sort()).toEqual(active.map((u) => u.email).sort());
    expect(weekly?.rcptTo).toContain("vera@example.com");

    // Daily: 12 GiB -> 5 GiB. DRR 58.33 %, 7 GiB saved x 0.021 x 0.8 = $0.1176 a month, x 12 = $1.41.
    const text = daily?.parsed.text ?? "";
    expect(text).toContain("Crunch jobs: 2 on 2 table(s)");
    expect(text).toContain("Data reduction (DRR): 58.33%");
    expect(text).toContain("Bytes saved: 7 GiB (12 GiB -> 5 GiB)");
    expect(text).toContain("Dollars saved per month: $0.12 at $0.02 per GB-month");
    expect(text).toContain("Projected over 12 months: $1.41");
    expect(text).toContain("Console: https://console.example.com/");
    expect(daily?.parsed.html).toContain('data-theme="dark"');
    expect(daily?.parsed.html).toContain('href="https://console.example.com/"');
    expect(daily?.parsed.subject).toBe("Lakesmith daily report: 7 GiB saved, 0 failure(s)");
    // Weekly: all three crunches, 16 GiB -> 7 GiB.
    expect(weekly?.parsed.text).toContain("Crunch jobs: 3 on 2 table(s)");
    expect(weekly?.parsed.text).toContain("Bytes saved: 9 GiB (16 GiB -> 7 GiB)");
    // Each report's summary reaches the chat webhook once.
    const summaries = hook.accepted().map((r) => r.body.text as string);
    expect(summaries).toHaveLength(2);
    expect(summaries.find((t) => t.includes("daily report"))).toContain("Data reduction (DRR): 58.33%");
    expect(summaries.find((t) => t.includes("weekly report"))).toContain("Crunch jobs: 3 on 2 table(s)");
    // The preview at the send time is what was sent.
    expect(preview.body.text).toBe(text.trimEnd());
    expect(preview.body.subject).toBe(daily?.parsed.subject);

    // Later ticks, a restarted dispatcher and a second control plane send neither again.
    clock.advance(3_600_000);
    await plane.services.notifications.tick();
    const restarted = new NotificationService(plane.services.db, clock, plane.services.config, {});
    expect((await restarted.tick()).reports).toEqual([]);
    expect(smtp.mails.length - before).toBe(2);
    expect(hook.requests).toHaveLength(2);
  });

  it("says how to set console_public_url when it is unset, and uses the Light theme", async () => {
    await admin(plane, "PUT", "/api/v1/config", { console_public_url: null, email_theme: "Light" });
    const res = await admin(plane, "POST", "/api/v1/reports/preview?period=weekly");
    expect(res.status, res.text).toBe(200);
    expect(res.body.text).toContain("set console_public_url");
    expect(res.body.html).toContain('data-theme="light"');
    expect(res.body.html).not.toContain("href=");
    expect((await admin(plane, "POST", "/api/v1/reports/preview?period=monthly")).status).toBe(422);
  });

  it("sends a report now on an Admin's request, outside the schedule", async () => {
    const before = smtp.mails.length;
    const res = await admin(plane, "POST", "/api/v1/reports/send?period=daily");
    expect(res.status, res.text).toBe(202);
    expect(res.body.items.find((r: { channel: string }) => r.channel === "email")).toMatchObject({
      kind: "report_daily",
      status: "sent",
    });
    expect(smtp.mails.length - before).toBe(1);
  });
});

describe("delivery across control planes and without a transport", () => {
  let plane: TestPlane;
  afterEach(() => plane.close());

  it("delivers each notice once when two control planes dispatch on one database", async () => {
    const hook = await startWebhookReceiver(0);
    plane = await startTestPlane({ clock: new ManualClock(new Date("2026-11-24T12:00:00Z")) });
    await admin(plane, "PUT", "/api/v1/config", {
      chat_webhook_urls: [hook.url("/a"), hook.url("/b")],
      report_daily_time_utc: "23:59",
    });
    const failed = [];
    for (let i = 0; i < 8; i++) failed.push((await failJob(plane, `failure ${i}`)).id);
    const second = await openNodeDatabase(plane.dbUrl);
    const other = new NotificationService(second.db, plane.services.clock, plane.services.config, {});
    for (let i = 0; i < 3; i++) await Promise.all([plane.services.notifications.tick(), other.tick()]);
    second.close();
    const seen = hook.requests.map((r) => `${r.path} ${(r.body.text as string).match(/job_\w+/)?.[0]}`);
    expect(seen.sort()).toEqual(failed.flatMap((id) => [`/a ${id}`, `/b ${id}`]).sort());
    await hook.close();
  });

  it("keeps the SMTP login out of a refused login's error", async () => {
    const refusing = await startSmtpReceiver({ refuseLogins: true });
    const mailer = smtpMailer({
      url: `smtp://mailer:S3cret-Passw0rd@127.0.0.1:${refusing.port}`,
      from: "lakesmith@example.com",
    });
    plane = await startTestPlane({
      clock: new ManualClock(new Date("2026-11-24T12:00:00Z")),
      notifications: { email: mailer },
    });
    await admin(plane, "PUT", "/api/v1/config", {
      notification_emails: ["ops@example.com"],
      report_daily_time_utc: "23:59",
    });
    const job = await failJob(plane, "one");
    await plane.services.notifications.tick();
    const [email] = (await rowsOf(plane, job.id)).filter((r) => r.channel === "email");
    expect(email).toMatchObject({ status: "pending", attempts: 1 });
    expect(email?.lastError).toMatch(/^SMTP: /);
    expect(email?.lastError).toContain("Invalid username or password");
    expect(email?.lastError).not.toContain("S3cret-Passw0rd");
    expect(refusing.mails).toEqual([]);
    await refusing.close();
  });

  /** A control plane (re)started with `mailer` on the same database: one dispatch tick. */
  async function tickRestarted(mailer: Transports["email"]) {
    const connection = await openNodeDatabase(plane.dbUrl);
    try {
      const restarted = new NotificationService(connection.db, plane.services.clock, plane.services.config, {
        email: mailer,
      });
      return await restarted.tick();
    } finally {
      connection.close();
    }
  }
  const goodMailer = () => smtpMailer({ host: "127.0.0.1", port: smtp.port, from: "lakesmith@example.com" });

  it("keeps a failure notice and a report queued without a transport waiting, and sends each once when one is configured, across restarts", async () => {
    const logged: string[] = [];
    const clock = new ManualClock(new Date("2026-11-24T12:00:00Z"));
    const hook = await startWebhookReceiver(0);
    plane = await startTestPlane({ clock, notifications: { log: (m) => logged.push(m) } });
    await admin(plane, "PUT", "/api/v1/config", {
      notification_emails: ["ops@example.com"],
      daily_report_recipients: ["boss@example.com"],
      // Due at the first tick (a Tuesday: no weekly report).
      report_daily_time_utc: "11:00",
    });
    const a = await failJob(plane, "one");
    const b = await failJob(plane, "two");
    const first = await plane.services.notifications.tick();
    expect(first.reports).toEqual(["daily:2026-11-24"]);
    expect(first.dispatched).toMatchObject({ waiting: 6, sent: 0, skipped: 0 });
    const all = () => plane.services.db.select().from(notifications);
    const rows = await all();
    expect(rows.map((r) => [r.kind, r.channel, r.status, r.lastError, r.attempts]).sort()).toEqual(
      [
        ...[a, b].flatMap(() => [
          ["job_failed", "chat", "waiting_for_transport", NO_WEBHOOK, 0],
          ["job_failed", "email", "waiting_for_transport", NO_MAILER, 0],
        ]),
        ["report_daily", "chat", "waiting_for_transport", NO_WEBHOOK, 0],
        ["report_daily", "email", "waiting_for_transport", NO_MAILER, 0],
      ].sort(),
    );
    expect(logged).toEqual([`[lakesmith] notifications: ${NO_MAILER}`]);
    // The outbox says why, without the addresses.
    const listed = await admin(plane, "GET", "/api/v1/notifications?limit=10");
    expect(listed.body.items.map((r: { status: string }) => r.status)).toEqual(
      Array(6).fill("waiting_for_transport"),
    );
    expect(listed.text).not.toContain("ops@example.com");

    // More ticks without a transport: still waiting, nothing sent.
    clock.advance(3_600_000);
    expect((await plane.services.notifications.tick()).dispatched).toMatchObject({ woken: 0, sent: 0 });
    const before = smtp.mails.length;

    // Restarted with SMTP configured: the two notices and the report arrive, once each.
    const restarted = await tickRestarted(goodMailer());
    expect(restarted.reports).toEqual([]);
    expect(restarted.dispatched).toMatchObject({ woken: 3, expanded: 3, sent: 3 });
    const mails = smtp.mails.slice(before);
    expect(mails.map((m) => [m.parsed.subject?.split(":")[0], m.rcptTo.join()]).sort()).toEqual(
      [
        ["Lakesmith", "ops@example.com"],
        ["Lakesmith", "ops@example.com"],
        ["Lakesmith daily report", "boss@example.com"],
      ].sort(),
    );
    expect(mails.map((m) => m.parsed.subject).filter((t) => t?.includes(" job "))).toEqual(
      expect.arrayContaining([`Lakesmith: noop job ${a.id} failed`, `Lakesmith: noop job ${b.id} failed`]),
    );
    // Restarted again, the mailer-less plane ticking too, an hour later: nothing is sent twice.
    await tickRestarted(goodMailer());
    await plane.services.notifications.tick();
    clock.advance(3_600_000);
    await tickRestarted(goodMailer());
    expect(smtp.mails.length - before).toBe(3);

    // A webhook set later: the waiting chat rows are posted, once each.
    await admin(plane, "PUT", "/api/v1/config", { chat_webhook_urls: [hook.url("/late")] });
    expect((await plane.services.notifications.tick()).dispatched).toMatchObject({ woken: 3, sent: 3 });
    await plane.services.notifications.tick();
    await tickRestarted(goodMailer());
    const posted = hook.requests.map((r) => r.body.text as string);
    for (const needle of [a.id, b.id, "daily report"])
      expect(
        posted.filter((text) => text.includes(needle)),
        needle,
      ).toHaveLength(1);
    expect(hook.requests).toHaveLength(3);
    expect((await all()).filter((r) => r.status === "waiting_for_transport")).toEqual([]);
    await hook.close();
  });

  it("lets a row claimed by a control plane without a mailer wait, without spending a try", async () => {
    const clock = new ManualClock(new Date("2026-11-24T12:00:00Z"));
    const refusing = await startSmtpReceiver({ refuseLogins: true });
    plane = await startTestPlane({ clock });
    await admin(plane, "PUT", "/api/v1/config", {
      notification_emails: ["ops@example.com"],
      report_daily_time_utc: "23:59",
    });
    const job = await failJob(plane, "one");
    // A control plane whose SMTP server refuses it: one failed try, due again in 30 s.
    await tickRestarted(smtpMailer({ url: `smtp://u:p@127.0.0.1:${refusing.port}`, from: "x@example.com" }));
    const email = async () => (await rowsOf(plane, job.id)).find((r) => r.channel === "email");
    expect(await email()).toMatchObject({ status: "pending", attempts: 1 });
    clock.advance(30_000);
    // This plane has no mailer: the row it claims waits, still at one try.
    expect((await plane.services.notifications.tick()).dispatched).toMatchObject({ waiting: 1 });
    expect(await email()).toMatchObject({
      status: "waiting_for_transport",
      attempts: 1,
      lastError: NO_MAILER,
    });
    const before = smtp.mails.length;
    expect((await tickRestarted(goodMailer())).dispatched).toMatchObject({ woken: 1, sent: 1 });
    expect(await email()).toMatchObject({ status: "sent", attempts: 2 });
    expect(smtp.mails.length - before).toBe(1);
    await refusing.close();
  });

  it("skips a row that waited seven days for a transport, saying why", async () => {
    const clock = new ManualClock(new Date("2026-11-24T12:00:00Z"));
    plane = await startTestPlane({ clock });
    await admin(plane, "PUT", "/api/v1/config", {
      notification_emails: ["ops@example.com"],
      report_daily_time_utc: "23:59",
    });
    const job = await failJob(plane, "one");
    await plane.services.notifications.tick();
    clock.advance(TRANSPORT_WAIT_MS - 1);
    await plane.services.notifications.tick();
    expect((await rowsOf(plane, job.id)).map((r) => r.status)).toEqual([
      "waiting_for_transport",
      "waiting_for_transport",
    ]);
    clock.advance(1);
    expect((await plane.services.notifications.tick()).dispatched).toMatchObject({ skipped: 2 });
    const [email] = (await rowsOf(plane, job.id)).filter((r) => r.channel === "email");
    expect(email).toMatchObject({ status: "skipped", lastError: `no transport within 7 days: ${NO_MAILER}` });
    const before = smtp.mails.length;
    expect((await tickRestarted(goodMailer())).dispatched).toMatchObject({ woken: 0, sent: 0 });
    expect(smtp.mails.length).toBe(before);
  });
});
