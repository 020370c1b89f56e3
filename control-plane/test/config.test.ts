import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, ADMIN_PASSWORD, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

const get = async (token = ADMIN_KEY) => (await plane.call("GET", "/api/v1/config", { token })).json();

describe("configuration", () => {
  it("starts with document 2's defaults, each with its range and unit", async () => {
    const config = await get();
    expect(config).toMatchObject({
      min_eligible_table_size_gb: 0.1,
      quarterly_goal_pb: 0,
      storage_cost_usd_per_gb_month: 0.021,
      cloud_discount_percent: 0,
      projection_period_months: null,
      operational_cost_usd_per_pb: null,
      hourly_fanout_min_partition_size_gb: null,
      mutation_interval_threshold_minutes: null,
      access_token_ttl_seconds: 3600,
      refresh_token_ttl_sso_seconds: 7200,
      refresh_token_ttl_local_seconds: 604800,
      console_public_url: null,
      daily_report_recipients: [],
      weekly_report_recipients: [],
      default_partition_expiration_days: 30,
      updated_at: null,
    });
    expect(config.setting_definitions.access_token_ttl_seconds).toMatchObject({
      default: 3600,
      minimum: 900,
      maximum: 28800,
      unit: "seconds",
      nullable: false,
    });
    expect(config.setting_definitions.projection_period_months).toMatchObject({
      minimum: 1,
      maximum: 60,
      nullable: true,
    });
  });

  it("PUT and POST both apply partial updates and keep the other values", async () => {
    const put = await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { cloud_discount_percent: 20 },
    });
    expect(put.status).toBe(200);
    const post = await plane.call("POST", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { projection_period_months: 12, daily_report_recipients: ["ops@example.com"] },
    });
    expect(post.status).toBe(200);
    const config = await get();
    expect(config).toMatchObject({
      cloud_discount_percent: 20,
      projection_period_months: 12,
      daily_report_recipients: ["ops@example.com"],
      storage_cost_usd_per_gb_month: 0.021,
    });
    expect(config.updated_at).not.toBeNull();
  });

  it("accepts null to unset an optional setting", async () => {
    await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { hourly_fanout_min_partition_size_gb: 50 },
    });
    await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { hourly_fanout_min_partition_size_gb: null },
    });
    expect((await get()).hourly_fanout_min_partition_size_gb).toBeNull();
  });

  it.each([
    ["storage_cost_usd_per_gb_month", 2],
    ["storage_cost_usd_per_gb_month", 0.0001],
    ["cloud_discount_percent", 91],
    ["projection_period_months", 61],
    ["operational_cost_usd_per_pb", -1],
    ["hourly_fanout_min_partition_size_gb", 5],
    ["mutation_interval_threshold_minutes", 121],
    ["access_token_ttl_seconds", 899],
    ["refresh_token_ttl_local_seconds", 2_592_001],
    ["console_public_url", "ftp://example.com"],
    ["email_theme", "Pink"],
    ["daily_report_recipients", ["not-an-email"]],
  ])("rejects %s = %j with 422 naming the field and changes nothing", async (field, value) => {
    const before = await get();
    const res = await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { [field]: value } });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.errors[0].path.split(".")[0]).toBe(field);
    expect(await get()).toEqual(before);
  });

  it("rejects unknown fields so a typo is not silently dropped", async () => {
    const res = await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { cloud_discount: 10 } });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain("cloud_discount");
  });

  it("requires refresh-token TTLs above the access-token TTL", async () => {
    const res = await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { refresh_token_ttl_sso_seconds: 3600 },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].path).toBe("refresh_token_ttl_sso_seconds");
    const access = await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { access_token_ttl_seconds: 8000 },
    });
    expect(access.status).toBe(422);
    expect((await access.json()).errors.map((e: { path: string }) => e.path)).toEqual([
      "access_token_ttl_seconds",
    ]);
    const both = await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { access_token_ttl_seconds: 8000, refresh_token_ttl_sso_seconds: 9000 },
    });
    expect(both.status).toBe(200);
    await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { access_token_ttl_seconds: 3600, refresh_token_ttl_sso_seconds: 7200 },
    });
  });

  it("applies a TTL change to the next token issued", async () => {
    await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { access_token_ttl_seconds: 1200 } });
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    expect(pair.expires_in).toBe(1200);
    await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { access_token_ttl_seconds: 3600 } });
  });

  it("lets every role read and only Admin change it", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const editor = await plane.userWithRole("Editor");
    expect((await plane.call("GET", "/api/v1/config", { token: viewer.token })).status).toBe(200);
    for (const token of [viewer.token, editor.token]) {
      expect(
        (await plane.call("PUT", "/api/v1/config", { token, body: { quarterly_goal_pb: 1 } })).status,
      ).toBe(403);
      expect(
        (await plane.call("POST", "/api/v1/config", { token, body: { quarterly_goal_pb: 1 } })).status,
      ).toBe(403);
    }
  });
});

describe("feature flags", () => {
  it("reports a missing flag as disabled and lets an Admin set it", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const missing = await plane.call("GET", "/api/v1/feature-flags/object_maintenance", {
      token: viewer.token,
    });
    expect(await missing.json()).toMatchObject({ key: "object_maintenance", enabled: false });
    expect(
      (
        await plane.call("PUT", "/api/v1/feature-flags/object_maintenance", {
          token: viewer.token,
          body: { enabled: true },
        })
      ).status,
    ).toBe(403);
    const set = await plane.call("PUT", "/api/v1/feature-flags/object_maintenance", {
      token: ADMIN_KEY,
      body: { enabled: true },
    });
    expect(set.status).toBe(200);
    const now = await plane.call("GET", "/api/v1/feature-flags/object_maintenance", { token: viewer.token });
    expect(await now.json()).toMatchObject({ key: "object_maintenance", enabled: true });
    const list = await (await plane.call("GET", "/api/v1/feature-flags", { token: viewer.token })).json();
    expect(list.items.map((f: { key: string }) => f.key)).toContain("object_maintenance");
  });

  it("rejects a malformed key or body with 422", async () => {
    expect(
      (await plane.call("GET", `/api/v1/feature-flags/${"x".repeat(101)}`, { token: ADMIN_KEY })).status,
    ).toBe(422);
    const res = await plane.call("PUT", "/api/v1/feature-flags/a", {
      token: ADMIN_KEY,
      body: { enabled: "yes" },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].path).toBe("enabled");
  });
});
