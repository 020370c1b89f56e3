/**
 * Two control-plane instances on one database, as with several Workers isolates or Node replicas:
 * what one changes, the other sees within the cache TTL (5 s), and at once on the instance that
 * made the change.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { buildApp } from "../src/app.ts";
import { bootstrap } from "../src/bootstrap/bootstrap.ts";
import { Keyring } from "../src/secrets/keyring.ts";
import { createServices } from "../src/services.ts";
import { ADMIN_KEY } from "./harness.ts";

const dir = mkdtempSync(join(tmpdir(), "lakesmith-replicas-"));
const clock = new ManualClock(new Date());
const secrets = Keyring.random();
let a: ReturnType<typeof buildApp>;
let b: ReturnType<typeof buildApp>;
const closers: (() => void)[] = [];

beforeAll(async () => {
  const apps = [];
  for (let i = 0; i < 2; i++) {
    const { db, client } = await openNodeDatabase(`file:${join(dir, "shared.db")}`);
    closers.push(() => client.close());
    const services = createServices({ db, clock, secrets });
    await bootstrap(services, { adminApiKey: ADMIN_KEY, adminPassword: "replica-password" });
    apps.push(buildApp(services));
  }
  [a, b] = apps as [typeof a, typeof b];
});
afterAll(() => {
  for (const close of closers) close();
  rmSync(dir, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
const discount = async (app: typeof a) =>
  (await (await app.request("/api/v1/config", { headers: auth })).json()).cloud_discount_percent;

describe("two instances on one database", () => {
  it("bootstraps once", async () => {
    const users = await (await a.request("/api/v1/users", { headers: auth })).json();
    expect(users.items.filter((u: { username: string }) => u.username === "admin")).toHaveLength(1);
  });

  it("sees a configuration change at once on the writer and within 5 s on the other", async () => {
    expect(await discount(b)).toBe(0);
    const put = await a.request("/api/v1/config", {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ cloud_discount_percent: 30 }),
    });
    expect(put.status).toBe(200);
    expect(await discount(a)).toBe(30);
    clock.advance(5_000);
    expect(await discount(b)).toBe(30);
  });

  it("stops a key deleted on one instance within 5 s on the other", async () => {
    const created = await (
      await a.request("/api/v1/api-keys", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "k", scopes: ["config:read"] }),
      })
    ).json();
    const headers = { authorization: `Bearer ${created.key}` };
    expect((await b.request("/api/v1/config", { headers })).status).toBe(200);
    await a.request(`/api/v1/api-keys/${created.id}`, { method: "DELETE", headers: auth });
    expect((await a.request("/api/v1/config", { headers })).status).toBe(401);
    clock.advance(5_000);
    expect((await b.request("/api/v1/config", { headers })).status).toBe(401);
  });
});
