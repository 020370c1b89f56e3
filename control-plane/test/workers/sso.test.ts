/**
 * Single sign-on through the Worker build on D1. OIDC runs end to end: the Worker discovers the
 * loopback `oidc-provider` that the suite's config started, a browser goes through its login, the
 * Worker exchanges the code, checks the ID token against the provider's JWKS with its own fetch,
 * and the code it hands out buys a token pair. SAML needs XML signatures the Worker cannot verify:
 * its routes answer 501 saying so.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Browser } from "../support/browser.ts";
import { OIDC_TEST_CLIENT } from "../support/oidc-client.ts";
import { call, json, worker } from "./support/client.ts";

const ORIGIN = "https://lakesmith.test";

const browser = (login: string) =>
  new Browser({
    local: {
      origin: ORIGIN,
      request: (path, init) => worker().fetch(new Request(`${ORIGIN}${path}`, init)),
    },
    fill: { login, password: "any" },
  });

describe("single sign-on in workerd (D1)", () => {
  it("logs an OIDC user in against a real provider and refuses a password user", async () => {
    const client = OIDC_TEST_CLIENT(ORIGIN);
    const saved = await json("/api/v1/sso/oidc", {
      method: "PUT",
      body: {
        issuer: env.TEST_OIDC_ISSUER,
        client_id: client.client_id,
        client_secret: client.client_secret,
      },
    });
    expect(saved).toMatchObject({ has_client_secret: true });
    expect(JSON.stringify(saved)).not.toContain(client.client_secret);
    await json(
      "/api/v1/users",
      {
        method: "POST",
        body: { full_name: "Wanda", email: "wanda@example.com", role: "Editor", auth_type: "oidc" },
      },
      201,
    );

    const { stoppedAt } = await browser("WANDA@example.com").navigate(
      `${ORIGIN}/api/v1/auth/sso/oidc/login`,
      (u) => u.pathname === "/login/sso",
    );
    const code = new URLSearchParams(stoppedAt?.hash.slice(1)).get("code");
    expect(code).toBeTruthy();
    const exchanged = await worker().fetch(
      new Request(`${ORIGIN}/api/v1/auth/sso/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ code }),
      }),
    );
    expect(exchanged.status).toBe(200);
    const pair = (await exchanged.json()) as { access_token: string };
    expect((await call("/api/v1/health", { token: pair.access_token })).status).toBe(200);

    const { last } = await browser("admin@lakesmith.local").navigate(
      `${ORIGIN}/api/v1/auth/sso/oidc/login`,
      (u) => u.pathname === "/login/sso",
    );
    expect(last.response.status).toBe(403);
    expect(last.body).toMatch(/signs in with a password, not OIDC/);
  });

  it("answers 501 on the SAML routes, saying SAML runs on the Node control plane", async () => {
    for (const [method, path] of [
      ["GET", "/api/v1/auth/sso/saml/login"],
      ["GET", "/api/v1/auth/sso/saml/metadata"],
      ["GET", "/api/v1/auth/sso/saml/finish?ticket=t"],
    ] as const) {
      const res = await call(path, { method });
      expect(res.status, path).toBe(501);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/Node only/);
    }
    const acs = await worker().fetch(
      new Request(`${ORIGIN}/api/v1/auth/sso/saml/acs`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "SAMLResponse=PHNhbWw%2BPC9zYW1sPg%3D%3D",
      }),
    );
    expect(acs.status).toBe(501);
  });
});
