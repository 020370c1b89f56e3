import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";

const ADMIN_KEY = "lsk_workerdtestkey0000000000000000000000000000";
const worker = () => (exports as unknown as { default: Fetcher }).default;

async function call(path: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  if (init.body) headers.set("content-type", "application/json");
  return worker().fetch(new Request(`https://lakesmith.test${path}`, { ...init, headers }));
}

describe("control plane in workerd", () => {
  it("answers the open liveness probe", async () => {
    const res = await call("/healthz");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
  });

  it("requires a credential on /api/v1 with a problem+json 401", async () => {
    const res = await call("/api/v1/health");
    expect(res.status).toBe(401);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
  });

  it("reports the D1 database healthy to the bootstrap admin key", async () => {
    const res = await call("/api/v1/health", { token: ADMIN_KEY });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { components: { database: { status: string } } };
    expect(body.components.database.status).toBe("ok");
  });

  it("logs in, reads and updates the configuration, and rotates the refresh token", async () => {
    const login = await call("/api/v1/auth/login", {
      method: "POST",
      body: JSON.stringify({ username: "admin", password: "workerd-admin-password" }),
    });
    expect(login.status).toBe(200);
    const pair = (await login.json()) as { access_token: string; refresh_token: string };

    const put = await call("/api/v1/config", {
      method: "PUT",
      token: pair.access_token,
      body: JSON.stringify({ cloud_discount_percent: 15 }),
    });
    expect(put.status).toBe(200);
    const config = (await (await call("/api/v1/config", { token: pair.access_token })).json()) as {
      cloud_discount_percent: number;
    };
    expect(config.cloud_discount_percent).toBe(15);

    const bad = await call("/api/v1/config", {
      method: "POST",
      token: pair.access_token,
      body: JSON.stringify({ cloud_discount_percent: 95 }),
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: { path: string }[] }).errors[0]?.path).toBe(
      "cloud_discount_percent",
    );

    const refreshed = await call("/api/v1/auth/refresh", {
      method: "POST",
      body: JSON.stringify({ refresh_token: pair.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    const reused = await call("/api/v1/auth/refresh", {
      method: "POST",
      body: JSON.stringify({ refresh_token: pair.refresh_token }),
    });
    expect(reused.status).toBe(401);
  });

  it("creates a user, lists it as created and refuses a duplicate with 409", async () => {
    const body = JSON.stringify({
      full_name: "Ada Lovelace",
      email: "ada@example.com",
      role: "Viewer",
      auth_type: "oidc",
    });
    const first = await call("/api/v1/users", { method: "POST", token: ADMIN_KEY, body });
    expect(first.status).toBe(201);
    const created = (await first.json()) as { id: string; username: string };
    expect(created.username).toBe("ada");
    const again = await call("/api/v1/users", { method: "POST", token: ADMIN_KEY, body });
    expect(again.status).toBe(409);
    // The list's items are JSON that D1 builds (users/view.ts): the same as the created user.
    const list = await call("/api/v1/users?limit=1000", { token: ADMIN_KEY });
    const page = (await list.json()) as { items: { id: string }[]; total: number };
    expect(page.total).toBe(page.items.length);
    expect(page.items.find((u) => u.id === created.id)).toEqual(created);
  });

  it("serves the docs page with its offline assets to an Admin", async () => {
    const page = await call("/docs", { token: ADMIN_KEY });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/docs/assets/swagger-ui-bundle.js");
    const asset = await call("/docs/assets/swagger-ui.css");
    expect(asset.status).toBe(200);
  });
});
