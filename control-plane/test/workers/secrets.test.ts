import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { workerKeyring } from "../../src/adapter/worker-db.ts";

const ADMIN_KEY = "lsk_workerdtestkey0000000000000000000000000000";
const WEBHOOK = "https://hooks.slack.com/services/T0/B0/workerd-webhook-secret-0000";
const worker = () => (exports as unknown as { default: Fetcher }).default;

async function call(path: string, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${ADMIN_KEY}`);
  if (init.body) headers.set("content-type", "application/json");
  return worker().fetch(new Request(`https://lakesmith.test${path}`, { ...init, headers }));
}

describe("secret settings in workerd", () => {
  it("stores a webhook URL encrypted in D1 and answers it masked", async () => {
    const put = await call("/api/v1/config", {
      method: "PUT",
      body: JSON.stringify({ chat_webhook_urls: [WEBHOOK] }),
    });
    expect(put.status).toBe(200);
    const config = (await (await call("/api/v1/config")).json()) as { chat_webhook_urls: string[] };
    expect(config.chat_webhook_urls).toEqual(["https://hooks.slack.com/••••0000"]);

    const row = await env.DB.prepare("select value from settings where key = 'chat_webhook_urls'").first<{
      value: string;
    }>();
    expect(row?.value).toMatch(/^enc:v1:[0-9a-f]{8}:/);
    expect(row?.value).not.toContain("workerd-webhook-secret");
  });

  it("cannot start without LAKESMITH_SECRETS_KEY, and the logged reason says how to set it", () => {
    expect(() => workerKeyring({})).toThrow("run `npx wrangler secret put LAKESMITH_SECRETS_KEY`");
  });
});
