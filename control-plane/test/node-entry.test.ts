/**
 * The Node entry as a user runs it: `tsx src/node.ts` on an embedded libSQL file, over real HTTP.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const ENTRY = fileURLToPath(new URL("../src/node.ts", import.meta.url));
const TSX = fileURLToPath(new URL("../../node_modules/.bin/tsx", import.meta.url));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(dbFile: string, env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(TSX, [ENTRY], {
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", LAKESMITH_DB_URL: `file:${dbFile}`, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/listening on http:\/\/[\d.]+:(\d+)/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`server did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const port = /listening on http:\/\/[\d.]+:(\d+)/.exec(out)?.[1];
  return { child, url: `http://127.0.0.1:${port}`, output: () => out, exited };
}

function tempDb(): string {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-node-"));
  dirs.push(dir);
  return join(dir, "nested", "lakesmith.db");
}

describe("npm start (Node entry)", () => {
  it("creates the database, prints generated credentials once, serves, and stops on SIGTERM", async () => {
    const db = tempDb();
    const first = await start(db);
    const key = /admin API key:\s+(\S+)/.exec(first.output())?.[1];
    const password = /admin password:\s+(\S+)/.exec(first.output())?.[1];
    expect(key).toMatch(/^lsk_/);
    expect(password).toBeTruthy();

    expect(await (await fetch(`${first.url}/healthz`)).text()).toBe("ok");
    const health = await fetch(`${first.url}/api/v1/health`, { headers: { authorization: `Bearer ${key}` } });
    expect(health.status).toBe(200);
    const login = await fetch(`${first.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password }),
    });
    expect(login.status).toBe(200);
    const { access_token } = await login.json();

    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = await start(db);
    expect(second.output()).not.toContain("generated credentials");
    const again = await fetch(`${second.url}/api/v1/config`, {
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(again.status, "tokens survive a restart").toBe(200);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  it("uses LAKESMITH_ADMIN_API_KEY and LAKESMITH_ADMIN_PASSWORD on first start", async () => {
    const key = `lsk_${"k".repeat(40)}`;
    const run = await start(tempDb(), {
      LAKESMITH_ADMIN_API_KEY: key,
      LAKESMITH_ADMIN_PASSWORD: "chosen-password",
    });
    expect(run.output()).not.toContain("admin API key:");
    expect(run.output()).not.toContain("admin password:");
    const res = await fetch(`${run.url}/api/v1/users`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const login = await fetch(`${run.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "chosen-password" }),
    });
    expect(login.status).toBe(200);
    run.child.kill("SIGTERM");
    expect(await run.exited).toBe(0);
  });

  it("keeps its secrets key in a 0600 file beside the database, reuses it, and never prints it or a webhook URL", async () => {
    const db = tempDb();
    const keyFile = join(dirname(db), "lakesmith.key");
    const key = `lsk_${"w".repeat(40)}`;
    const webhook = "https://hooks.slack.com/services/T0/B0/entry-test-webhook-secret";
    const auth = { authorization: `Bearer ${key}`, "content-type": "application/json" };
    const first = await start(db, { LAKESMITH_ADMIN_API_KEY: key });
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    const secretsKey = readFileSync(keyFile, "utf8").trim();
    const put = await fetch(`${first.url}/api/v1/config`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ chat_webhook_urls: [webhook] }),
    });
    expect(put.status).toBe(200);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);

    const second = await start(db, { LAKESMITH_ADMIN_API_KEY: key });
    expect(readFileSync(keyFile, "utf8").trim()).toBe(secretsKey);
    const config = await (await fetch(`${second.url}/api/v1/config`, { headers: auth })).json();
    expect(config.chat_webhook_urls).toEqual(["https://hooks.slack.com/••••cret"]);
    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);
    for (const output of [first.output(), second.output()]) {
      expect(output).not.toContain(secretsKey);
      expect(output).not.toContain("entry-test-webhook-secret");
    }
  });

  it("refuses to start on a remote database without LAKESMITH_SECRETS_KEY", async () => {
    const child = spawn(TSX, [ENTRY], {
      env: {
        ...process.env,
        PORT: "0",
        LAKESMITH_DB_URL: "libsql://db.example.invalid",
        LAKESMITH_SECRETS_KEY: "",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let out = "";
    child.stderr?.on("data", (d) => {
      out += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(out).toContain("LAKESMITH_SECRETS_KEY is not set");
  });

  it("refuses to start with an invalid environment and says which variable", async () => {
    const child = spawn(TSX, [ENTRY], {
      env: { ...process.env, PORT: "not-a-port", LAKESMITH_DB_URL: `file:${tempDb()}` },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let out = "";
    child.stderr?.on("data", (d) => {
      out += d;
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(1);
    expect(out).toContain("PORT");
  });
});
