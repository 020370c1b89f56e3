// Notifications on Workers (D1): a job an agent fails for good leaves its outbox rows, and the Cron
// Trigger's `scheduled` handler sends the failure email and the due reports through the HTTP email
// API, once. The email API is a third-party service that cannot run here, so it alone is a fetch
// mock; the Worker, D1, the agent's WebSocket and the scheduled handler are real.
import { afterEach, describe, expect, it, vi } from "vitest";
import { answeringAgent, type Json, json, until, worker } from "./support/client.ts";

const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("notifications in workerd", () => {
  it("sends a failed job's email and the due reports through the HTTP email API from the Cron Trigger, once", async () => {
    await json("/api/v1/config", {
      method: "PUT",
      body: {
        notification_emails: ["ops@example.com"],
        report_daily_time_utc: "00:00",
        report_weekly_day: WEEKDAYS[new Date().getUTCDay()],
      },
    });
    const { ws } = await answeringAgent("failing", { kinds: ["noop"], capabilities: [], allow: [] }, () => ({
      failed: "the lake is on fire",
    }));
    const job = await json(
      "/api/v1/jobs",
      { method: "POST", body: { kind: "noop", payload: {}, max_attempts: 1 } },
      201,
    );
    await until(
      () => json(`/api/v1/jobs/${job.id}`),
      (j) => j.status === "failed",
    );
    ws.close();
    const written = (await json("/api/v1/notifications")).items.filter((r: Json) => r.job_id === job.id);
    expect(written.map((r: Json) => `${r.channel} ${r.status}`).sort()).toEqual(["chat new", "email new"]);

    const sent: { url: string; auth: string | null; body: Json }[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (!request.url.startsWith("https://email-api.test/")) return realFetch(input, init);
      sent.push({ url: request.url, auth: request.headers.get("authorization"), body: await request.json() });
      return new Response(JSON.stringify({ id: `msg_${sent.length}` }), { status: 200 });
    });
    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });

    const failure = sent.find((m) => m.body.subject === `Lakesmith: noop job ${job.id} failed`);
    expect(failure).toMatchObject({
      url: "https://email-api.test/emails",
      auth: "Bearer workerd-email-api-token",
      body: { from: "lakesmith@example.com", to: ["ops@example.com"] },
    });
    expect(failure?.body.text).toContain("Error: the lake is on fire");
    expect(failure?.body.html).toContain("the lake is on fire");
    const reports = sent.filter((m) => /^Lakesmith (daily|weekly) report/.test(m.body.subject));
    expect(reports.map((m) => m.body.subject.split(" ")[1]).sort()).toEqual(["daily", "weekly"]);

    const rows = (await json("/api/v1/notifications")).items as Json[];
    expect(rows.find((r) => r.job_id === job.id && r.channel === "email")).toMatchObject({
      status: "sent",
      attempts: 1,
      recipients_count: 1,
    });
    // No webhook is configured: the chat row waits for one, and says so.
    expect(rows.find((r) => r.job_id === job.id && r.channel === "chat")).toMatchObject({
      status: "waiting_for_transport",
      last_error: "chat_webhook_urls is empty: waiting for a webhook to post to",
    });

    // The next tick sends nothing again.
    const count = sent.length;
    await worker().scheduled({ scheduledTime: new Date(), cron: "* * * * *" });
    expect(sent).toHaveLength(count);
  });
});
