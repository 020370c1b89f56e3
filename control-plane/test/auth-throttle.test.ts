/**
 * Login throttling on the Node server, over real sockets: per address and per account at an address,
 * 429 with Retry-After, waits that double up to a cap, and no lock-out from another address.
 * Addresses come from X-Forwarded-For, which this server trusts for one proxy hop.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@lakesmith/shared";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type NodeServer, type NodeServerOptions, startNodeServer } from "../src/adapter/node-server.ts";
import { loginThrottle } from "../src/db/schema.ts";
import { ADMIN_KEY, ADMIN_PASSWORD } from "./harness.ts";

const BREAKGLASS_PASSWORD = "breakglass-password-for-tests";

let dir: string;
let server: NodeServer;
let clock: ManualClock;

async function start(options: Partial<NodeServerOptions> = {}) {
  server = await startNodeServer({
    dbUrl: `file:${join(dir, "t.db")}`,
    port: 0,
    clock,
    schedulerIntervalMs: 0,
    trustProxyHops: 1,
    bootstrap: {
      adminPassword: ADMIN_PASSWORD,
      adminApiKey: ADMIN_KEY,
      breakGlassPassword: BREAKGLASS_PASSWORD,
    },
    ...options,
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "lakesmith-throttle-"));
  clock = new ManualClock(new Date("2026-03-01T00:00:00Z"));
});
afterEach(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function login(username: string, password: string, from: string) {
  return fetch(`${server.url}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from },
    body: JSON.stringify({ username, password }),
  });
}

async function statuses(count: number, username: string, from: string): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await login(username, `wrong-${i}`, from)).status);
  return seen;
}

async function setConfig(values: Record<string, number>) {
  const res = await fetch(`${server.url}/api/v1/config`, {
    method: "PUT",
    headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(values),
  });
  expect(res.status).toBe(200);
}

const ATTACKER = "198.51.100.66";
const OFFICE = "203.0.113.10";

describe("login throttling", () => {
  it("answers 429 with Retry-After after 30 wrong admin passwords, even to the right one, until the wait is over", async () => {
    await start();
    const seen = await statuses(30, "admin", ATTACKER);
    expect(seen.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(seen.slice(5))).toEqual(new Set([429]));

    const refused = await login("admin", ADMIN_PASSWORD, ATTACKER);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    const problem = await refused.json();
    expect(problem).toMatchObject({ status: 429, title: "Too Many Requests" });
    const wait = Number(refused.headers.get("retry-after"));
    expect(wait).toBe(1);

    clock.advance(wait * 1000);
    expect((await login("admin", ADMIN_PASSWORD, ATTACKER)).status).toBe(200);
  });

  it("never locks the break-glass admin out for another address", async () => {
    await start();
    await statuses(30, "breakglass", ATTACKER);
    expect((await login("breakglass", BREAKGLASS_PASSWORD, ATTACKER)).status).toBe(429);
    expect((await login("breakglass", BREAKGLASS_PASSWORD, OFFICE)).status).toBe(200);
  });

  it("doubles the wait with each failure after the limit, up to login_lockout_max_seconds", async () => {
    await start();
    await setConfig({ login_failures_per_account: 2, login_lockout_max_seconds: 5 });
    const waits: number[] = [];
    await statuses(1, "admin", ATTACKER);
    for (let i = 0; i < 5; i++) {
      expect((await login("admin", "still-wrong", ATTACKER)).status).toBe(401);
      const refused = await login("admin", ADMIN_PASSWORD, ATTACKER);
      expect(refused.status).toBe(429);
      const wait = Number(refused.headers.get("retry-after"));
      waits.push(wait);
      clock.advance(wait * 1000);
    }
    expect(waits).toEqual([1, 2, 4, 5, 5]);
  });

  it("throttles an address that fails on many accounts, and no other address", async () => {
    await start();
    await setConfig({ login_failures_per_client: 6 });
    const seen: number[] = [];
    for (let i = 0; i < 8; i++) seen.push((await login(`user-${i}`, "wrong-password", ATTACKER)).status);
    expect(seen).toEqual([401, 401, 401, 401, 401, 401, 429, 429]);
    expect((await login("admin", ADMIN_PASSWORD, ATTACKER)).status).toBe(429);
    expect((await login("admin", ADMIN_PASSWORD, OFFICE)).status).toBe(200);
  });

  it("does not count the attempts it refuses", async () => {
    await start();
    await setConfig({ login_failures_per_account: 2, login_failures_per_client: 4 });
    expect(await statuses(12, "admin", ATTACKER)).toEqual([401, 401, ...Array(10).fill(429)]);
    expect(await statuses(1, "someone-else", ATTACKER)).toEqual([401]);
  });

  it("clears an address's counts when a login from it succeeds", async () => {
    await start();
    expect(await statuses(4, "admin", OFFICE)).toEqual([401, 401, 401, 401]);
    expect((await login("admin", ADMIN_PASSWORD, OFFICE)).status).toBe(200);
    expect(await statuses(4, "admin", OFFICE)).toEqual([401, 401, 401, 401]);
    expect((await login("admin", ADMIN_PASSWORD, OFFICE)).status).toBe(200);
  });

  it("lets no more concurrent guesses through than the limit", async () => {
    await start();
    const seen = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => (await login("admin", `guess-${i}`, ATTACKER)).status),
    );
    expect(seen.filter((s) => s === 401)).toHaveLength(5);
    expect(seen.filter((s) => s === 429)).toHaveLength(15);
  });

  it("ignores X-Forwarded-For unless proxies are declared", async () => {
    await start({ trustProxyHops: 0 });
    await statuses(5, "admin", ATTACKER);
    expect((await login("admin", ADMIN_PASSWORD, OFFICE)).status).toBe(429);
  });

  it("uses the address the outermost trusted proxy saw, not entries the client wrote", async () => {
    await start({ trustProxyHops: 1 });
    await statuses(5, "admin", `${OFFICE}, ${ATTACKER}`);
    expect((await login("admin", ADMIN_PASSWORD, `10.9.9.9, ${ATTACKER}`)).status).toBe(429);
    expect((await login("admin", ADMIN_PASSWORD, `${ATTACKER}, ${OFFICE}`)).status).toBe(200);
  });

  it("deletes forgotten counters when a later login fails, so the table does not grow", async () => {
    await start();
    for (let i = 0; i < 10; i++) await login("admin", "wrong-password", `192.0.2.${i}`);
    const rows = async () => (await server.services.db.select().from(loginThrottle)).length;
    expect(await rows()).toBe(20);
    clock.advance(900_000);
    await login("admin", "wrong-password", ATTACKER);
    expect(await rows()).toBe(2);
  });
});
