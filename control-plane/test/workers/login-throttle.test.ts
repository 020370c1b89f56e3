import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const worker = () => (exports as unknown as { default: Fetcher }).default;

function login(password: string, from: string) {
  return worker().fetch(
    new Request("https://lakesmith.test/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json", "cf-connecting-ip": from },
      body: JSON.stringify({ username: "admin", password }),
    }),
  );
}

describe("login throttling in workerd (D1)", () => {
  it("answers 429 with Retry-After to the address that failed, and lets another address in", async () => {
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) seen.push((await login(`wrong-${i}`, "198.51.100.7")).status);
    expect(seen).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const refused = await login("workerd-admin-password", "198.51.100.7");
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await login("workerd-admin-password", "203.0.113.8")).status).toBe(200);
  });
});
