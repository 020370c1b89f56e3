/**
 * What single sign-on changes around accounts: the identity-provider settings (Admin, secret
 * write-only and encrypted), SSO enforcement with the break-glass exception, refresh tokens
 * revoked by deactivation and role changes, and TTL changes reaching new tokens.
 */
import { ManualClock } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ssoProviders, users } from "../src/db/schema.ts";
import { createServices } from "../src/services.ts";
import { ADMIN_KEY, ADMIN_PASSWORD, startTestPlane, type TestPlane } from "./harness.ts";

const BREAKGLASS_PASSWORD = "breakglass-password-for-sso-tests";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
  const [breakglass] = await plane.services.db.select().from(users).where(eq(users.username, "breakglass"));
  const res = await plane.call("PATCH", `/api/v1/users/${breakglass?.id}`, {
    token: ADMIN_KEY,
    body: { password: BREAKGLASS_PASSWORD },
  });
  expect(res.status).toBe(200);
});
afterAll(() => plane.close());

const login = (username: string, password: string) =>
  plane.call("POST", "/api/v1/auth/login", { body: { username, password } });
const refresh = (token: string) =>
  plane.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: token } });
const setConfig = async (body: Record<string, unknown>) =>
  expect((await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body })).status).toBe(200);

describe("identity provider settings", () => {
  it("answers 404 until a provider is set, and keeps the OIDC client secret encrypted and write-only", async () => {
    expect((await plane.call("GET", "/api/v1/sso/oidc", { token: ADMIN_KEY })).status).toBe(404);
    const secret = "a-client-secret-that-must-never-show";
    const put = await plane.call("PUT", "/api/v1/sso/oidc", {
      token: ADMIN_KEY,
      body: { issuer: "https://login.example.com/tenant", client_id: "lakesmith", client_secret: secret },
    });
    expect(await put.json()).toMatchObject({ has_client_secret: true, scopes: "openid email profile" });
    const [row] = await plane.services.db
      .select()
      .from(ssoProviders)
      .where(eq(ssoProviders.protocol, "oidc"));
    expect(row?.secret).toMatch(/^enc:v1:/);
    expect(JSON.stringify(row)).not.toContain(secret);

    // Omitted keeps the stored secret; null clears it.
    const kept = await plane.call("PUT", "/api/v1/sso/oidc", {
      token: ADMIN_KEY,
      body: { issuer: "https://login.example.com/tenant", client_id: "lakesmith-2" },
    });
    expect(await kept.json()).toMatchObject({ client_id: "lakesmith-2", has_client_secret: true });
    expect((await plane.services.sso.providers.oidc()).clientSecret).toBe(secret);
    const cleared = await plane.call("PUT", "/api/v1/sso/oidc", {
      token: ADMIN_KEY,
      body: { issuer: "https://login.example.com/tenant", client_id: "lakesmith", client_secret: null },
    });
    expect(await cleared.json()).toMatchObject({ has_client_secret: false });
  });

  it.each([
    ["/api/v1/sso/oidc", { issuer: "http://idp.example.com", client_id: "x" }, "issuer"],
    ["/api/v1/sso/oidc", { issuer: "https://idp.example.com", client_id: "x", scopes: "profile" }, "scopes"],
    ["/api/v1/sso/oidc", { issuer: "https://idp.example.com", client_id: "x", secret: "y" }, "(body)"],
    [
      "/api/v1/sso/saml",
      { idp_sso_url: "https://idp.example.com/sso", idp_entity_id: "idp", idp_certificates: [] },
      "idp_certificates",
    ],
    [
      "/api/v1/sso/saml",
      {
        idp_sso_url: "https://idp.example.com/sso",
        idp_entity_id: "idp",
        idp_certificates: ["not a certificate"],
      },
      "idp_certificates.0",
    ],
  ])("refuses PUT %s %j with 422 naming %s", async (path, body, field) => {
    const res = await plane.call("PUT", path, { token: ADMIN_KEY, body });
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { errors: { path: string }[] };
    expect(problem.errors.map((e) => e.path)).toContain(field);
  });

  it("answers 502 naming the issuer when discovery fails at login", async () => {
    const issuer = "http://127.0.0.1:9/unreachable";
    await plane.call("PUT", "/api/v1/sso/oidc", { token: ADMIN_KEY, body: { issuer, client_id: "c" } });
    const res = await plane.call("GET", "/api/v1/auth/sso/oidc/login");
    expect(res.status).toBe(502);
    expect(((await res.json()) as { detail: string }).detail).toContain(
      `OIDC discovery from ${issuer} failed`,
    );
  });

  it("lets only Admins read or change providers", async () => {
    const editor = await plane.userWithRole("Editor");
    expect((await plane.call("GET", "/api/v1/sso/oidc", { token: editor.token })).status).toBe(403);
    expect((await plane.call("DELETE", "/api/v1/sso/saml", { token: editor.token })).status).toBe(403);
  });
});

describe("SSO enforcement", () => {
  it("refuses password logins and refreshes but for the break-glass account while sso_enforced is on", async () => {
    const viewer = await plane.userWithRole("Viewer");
    await setConfig({ sso_enforced: true });
    try {
      const refused = await login("admin", ADMIN_PASSWORD);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { detail: string }).detail).toMatch(/sso_enforced.*break-glass/);
      expect((await login("admin", "a-wrong-password")).status).toBe(401);
      expect((await refresh(viewer.refresh)).status).toBe(403);
      expect((await login("breakglass", BREAKGLASS_PASSWORD)).status).toBe(200);
    } finally {
      await setConfig({ sso_enforced: false });
    }
    expect((await login("admin", ADMIN_PASSWORD)).status).toBe(200);
  });
});

describe("the single sign-on code exchange", () => {
  const exchange = (code: string) => plane.call("POST", "/api/v1/auth/sso/token", { body: { code } });

  it("keeps SSO sessions refreshing while password logins are enforced off", async () => {
    const created = await plane.call("POST", "/api/v1/users", {
      token: ADMIN_KEY,
      body: { full_name: "Olga", email: "olga@example.com", role: "Viewer", auth_type: "oidc" },
    });
    expect(created.status).toBe(201);
    const code = await plane.services.sso.login.complete("oidc", "OLGA@example.com");
    const pair = (await (await exchange(code)).json()) as { refresh_token: string };
    await setConfig({ sso_enforced: true });
    try {
      expect((await refresh(pair.refresh_token)).status).toBe(200);
    } finally {
      await setConfig({ sso_enforced: false });
    }
  });

  it("refuses a code whose user was deactivated after the callback, and an unknown code", async () => {
    const created = await plane.call("POST", "/api/v1/users", {
      token: ADMIN_KEY,
      body: { full_name: "Ivo", email: "ivo@example.com", role: "Viewer", auth_type: "saml" },
    });
    const { id } = (await created.json()) as { id: string };
    const code = await plane.services.sso.login.complete("saml", "ivo@example.com");
    await plane.call("PATCH", `/api/v1/users/${id}`, { token: ADMIN_KEY, body: { status: "inactive" } });
    expect((await exchange(code)).status).toBe(401);
    expect((await exchange("not-a-code")).status).toBe(401);
  });
});

describe("refresh tokens outlive no change of access", () => {
  it("revokes a user's refresh tokens when the user is deactivated, even if activated again", async () => {
    const user = await plane.userWithRole("Editor");
    const patch = (status: string) =>
      plane.call("PATCH", `/api/v1/users/${user.id}`, { token: ADMIN_KEY, body: { status } });
    expect((await patch("inactive")).status).toBe(200);
    expect((await patch("active")).status).toBe(200);
    expect((await refresh(user.refresh)).status).toBe(401);
  });

  it("revokes them when the role changes, and keeps them for a name change", async () => {
    const renamed = await plane.userWithRole("Editor");
    await plane.call("PATCH", `/api/v1/users/${renamed.id}`, {
      token: ADMIN_KEY,
      body: { full_name: "New Name" },
    });
    expect((await refresh(renamed.refresh)).status).toBe(200);

    const demoted = await plane.userWithRole("Editor");
    await plane.call("PATCH", `/api/v1/users/${demoted.id}`, { token: ADMIN_KEY, body: { role: "Viewer" } });
    expect((await refresh(demoted.refresh)).status).toBe(401);
    const revoked = await plane.userWithRole("Editor");
    await plane.call("DELETE", `/api/v1/users/${revoked.id}/roles`, {
      token: ADMIN_KEY,
      body: { roles: ["Editor"] },
    });
    expect((await refresh(revoked.refresh)).status).toBe(401);
  });
});

describe("token lifetimes", () => {
  it("gives newly issued tokens a changed TTL at once", async () => {
    await setConfig({ access_token_ttl_seconds: 1200 });
    try {
      const pair = (await (await login("admin", ADMIN_PASSWORD)).json()) as { expires_in: number };
      expect(pair.expires_in).toBe(1200);
    } finally {
      await setConfig({ access_token_ttl_seconds: 3600 });
    }
  });

  it("reaches tokens issued by another replica within seconds (its configuration cache lasts 5 s)", async () => {
    const clock = new ManualClock(new Date());
    const replica = createServices({ db: plane.services.db, secrets: plane.services.secrets, clock });
    expect((await replica.auth.login("admin", ADMIN_PASSWORD)).expires_in).toBe(3600);
    await setConfig({ access_token_ttl_seconds: 1500 });
    try {
      clock.advance(5_001);
      expect((await replica.auth.login("admin", ADMIN_PASSWORD)).expires_in).toBe(1500);
    } finally {
      await setConfig({ access_token_ttl_seconds: 3600 });
    }
  });
});
