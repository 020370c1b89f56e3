/**
 * OIDC single sign-on end to end against a real provider (`oidc-provider`) on loopback: a browser
 * goes from the control plane to the provider's login and back, the console trades the code for
 * tokens, and every refusal is one the provider's real answers (or a real token for another
 * client) provoke.
 */
import { ManualClock } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { refreshTokens, users } from "../src/db/schema.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { Browser } from "./support/browser.ts";
import { OIDC_TEST_CLIENT } from "./support/oidc-client.ts";
import { startOidcProvider } from "./support/oidc-provider.ts";

const ORIGIN = "http://lakesmith.test";
const CALLBACK = `${ORIGIN}/api/v1/auth/sso/oidc/callback`;
const LAKESMITH = OIDC_TEST_CLIENT(ORIGIN);
const OTHER = {
  client_id: "other-app",
  client_secret: "other-client-secret-0123456789",
  redirect_uris: ["http://other.test/cb"],
};

let plane: TestPlane;
let idp: Awaited<ReturnType<typeof startOidcProvider>>;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  idp = await startOidcProvider([LAKESMITH, OTHER]);
  plane = await startTestPlane({ clock });
  // Every refusal below counts against the login throttle; the last test puts the limits back.
  await plane.call("PUT", "/api/v1/config", {
    token: ADMIN_KEY,
    body: { console_public_url: ORIGIN, login_failures_per_account: 1000, login_failures_per_client: 10_000 },
  });
  const res = await plane.call("PUT", "/api/v1/sso/oidc", {
    token: ADMIN_KEY,
    body: { issuer: idp.issuer, client_id: LAKESMITH.client_id, client_secret: LAKESMITH.client_secret },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  for (const [email, authType] of [
    ["alice@example.com", "oidc"],
    ["sam@example.com", "saml"],
    ["idle@example.com", "oidc"],
  ] as const) {
    const created = await plane.call("POST", "/api/v1/users", {
      token: ADMIN_KEY,
      body: { full_name: email, email, role: "Viewer", auth_type: authType },
    });
    expect(created.status).toBe(201);
  }
  await plane.userWithRole("Viewer", "paula");
  const [idle] = await plane.services.db.select().from(users).where(eq(users.email, "idle@example.com"));
  await plane.call("PATCH", `/api/v1/users/${idle?.id}`, { token: ADMIN_KEY, body: { status: "inactive" } });
});
afterAll(async () => {
  plane?.close();
  await idp?.close();
});
beforeEach(() => clock.set(new Date()));

function browser(login: string, rewrite?: (url: URL) => URL | Promise<URL>) {
  return new Browser({
    local: {
      origin: ORIGIN,
      request: (path, init) => plane.app.request(path, init) as Promise<Response>,
    },
    fill: { login, password: "any" },
    ...(rewrite ? { rewrite } : {}),
  });
}

/** Signs in through the provider; the redirect that ends the login, or the refusal page. */
async function signIn(login: string, rewrite?: (url: URL) => URL | Promise<URL>) {
  return browser(login, rewrite).navigate(
    `${ORIGIN}/api/v1/auth/sso/oidc/login`,
    (url) => url.origin === ORIGIN && url.pathname === "/login/sso",
  );
}

const codeOf = (url: URL | undefined) => new URLSearchParams(url?.hash.slice(1)).get("code") ?? "";

describe("OIDC single sign-on against oidc-provider", () => {
  it("keeps the client secret write-only", async () => {
    const res = await plane.call("GET", "/api/v1/sso/oidc", { token: ADMIN_KEY });
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({
      issuer: idp.issuer,
      client_id: "lakesmith",
      has_client_secret: true,
    });
    expect(text).not.toContain(LAKESMITH.client_secret);
  });

  it("logs a user in: the code buys a token pair with the SSO refresh TTL, once, and the login time is kept", async () => {
    const { stoppedAt } = await signIn("Alice@Example.COM");
    expect(stoppedAt?.href).toMatch(/^http:\/\/lakesmith\.test\/login\/sso#code=/);
    expect(stoppedAt?.search).toBe("");
    const code = codeOf(stoppedAt);
    const res = await plane.call("POST", "/api/v1/auth/sso/token", { body: { code } });
    expect(res.status).toBe(200);
    const pair = (await res.json()) as { access_token: string; refresh_token: string; expires_in: number };
    expect(pair.expires_in).toBe(3600);
    expect((await plane.call("GET", "/api/v1/health", { token: pair.access_token })).status).toBe(200);

    const [alice] = await plane.services.db.select().from(users).where(eq(users.email, "alice@example.com"));
    expect(alice?.lastLoginAt?.getTime()).toBe(clock.now().getTime());
    const tokens = await plane.services.db
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, alice?.id ?? ""));
    expect(tokens.at(-1)?.expiresAt.getTime()).toBe(clock.now().getTime() + 7200 * 1000);

    const again = await plane.call("POST", "/api/v1/auth/sso/token", { body: { code } });
    expect(again.status).toBe(401);
  });

  it("refuses a login whose nonce was changed on the way to the provider", async () => {
    const { last } = await signIn("alice@example.com", (url) => {
      if (url.href.startsWith(`${idp.issuer}/auth?`)) url.searchParams.set("nonce", "forged-nonce");
      return url;
    });
    expect(last.response.status).toBe(401);
    expect(last.response.headers.get("content-type")).toContain("text/html");
    expect(last.body).toMatch(/nonce/);
  });

  it("refuses a callback with a forged state, and one replayed after the login finished", async () => {
    const forged = await signIn("alice@example.com", (url) => {
      if (url.href.startsWith(`${CALLBACK}?`)) url.searchParams.set("state", "forged-state");
      return url;
    });
    expect(forged.last.response.status).toBe(400);
    expect(forged.last.body).toMatch(/unknown, expired or already finished/);

    let callback: URL | undefined;
    const b = browser("alice@example.com", (url) => {
      if (url.href.startsWith(`${CALLBACK}?`)) callback = new URL(url);
      return url;
    });
    const done = await b.navigate(`${ORIGIN}/api/v1/auth/sso/oidc/login`, (u) => u.pathname === "/login/sso");
    expect(codeOf(done.stoppedAt)).not.toBe("");
    const replay = await b.navigate(callback?.href ?? "", (u) => u.pathname === "/login/sso");
    expect(replay.last.response.status).toBe(400);
  });

  it("refuses a callback finished in another browser than the one that started the login", async () => {
    let callback: URL | undefined;
    await signIn("alice@example.com", (url) => {
      if (url.href.startsWith(`${CALLBACK}?`)) callback = new URL(url);
      return url.href.startsWith(`${CALLBACK}?`) ? new URL(`${ORIGIN}/nowhere`) : url;
    });
    const elsewhere = await browser("x").navigate(callback?.href ?? "", (u) => u.pathname === "/login/sso");
    expect(elsewhere.last.response.status).toBe(400);
    expect(elsewhere.last.body).toMatch(/another browser/);
  });

  it("refuses an expired ID token (our clock two hours past the provider's)", async () => {
    clock.set(new Date(Date.now() + 2 * 3600_000));
    const { last } = await signIn("alice@example.com");
    expect(last.response.status).toBe(401);
    expect(last.body).toMatch(/exp/);
  });

  it("refuses an ID token the provider signed for another client (wrong audience)", async () => {
    const { last } = await signIn("alice@example.com", async (url) => {
      if (url.href.startsWith(`${idp.issuer}/auth?`)) {
        // The provider's own token for the other client, with this login's nonce, replaces ours.
        const nonce = url.searchParams.get("nonce") ?? "";
        idp.swapNextIdToken(await idp.idTokenFor(OTHER, "alice@example.com", nonce));
      }
      return url;
    });
    expect(last.response.status).toBe(401);
    expect(last.body).toMatch(/aud/);
  });

  it.each([
    ["unknown@example.com", 403, /No Lakesmith user has the email unknown@example\.com/],
    ["idle@example.com", 403, /inactive/],
    ["paula@example.com", 403, /signs in with a password, not OIDC/],
    ["sam@example.com", 403, /signs in with SAML single sign-on, not OIDC/],
  ])("refuses %s with a page that says why", async (login, status, reason) => {
    const { last } = await signIn(login);
    expect(last.response.status).toBe(status);
    expect(last.response.headers.get("content-type")).toContain("text/html");
    expect(last.body).toMatch(reason);
  });

  it("answers problem+json to a caller that does not ask for HTML, and 404 with no provider", async () => {
    const res = await plane.call("GET", "/api/v1/auth/sso/oidc/callback?state=nope&code=x");
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect((await plane.call("DELETE", "/api/v1/sso/oidc", { token: ADMIN_KEY })).status).toBe(204);
    expect((await plane.call("GET", "/api/v1/auth/sso/oidc/login")).status).toBe(404);
    await plane.call("PUT", "/api/v1/sso/oidc", {
      token: ADMIN_KEY,
      body: { issuer: idp.issuer, client_id: LAKESMITH.client_id, client_secret: LAKESMITH.client_secret },
    });
  });

  it("throttles failed callbacks like password logins: a blocked address cannot even start a login", async () => {
    clock.advance(1000_000); // past the failure window: the earlier refusals are forgotten
    await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { login_failures_per_account: 2 } });
    expect((await signIn("unknown@example.com")).last.response.status).toBe(403);
    expect((await signIn("unknown@example.com")).last.response.status).toBe(403);
    const start = await plane.call("GET", "/api/v1/auth/sso/oidc/login");
    expect(start.status).toBe(429);
    expect(Number(start.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    clock.advance(2000);
    expect((await signIn("alice@example.com")).stoppedAt?.pathname).toBe("/login/sso");
  });
});
