/**
 * SAML 2.0 single sign-on end to end against a loopback IdP that signs with real XML signatures:
 * a browser follows the AuthnRequest redirect, the IdP's auto-posting form brings the Response to
 * the ACS, the ACS sends it on to the same-site step that checks its binding cookie, and the console
 * trades the code for tokens. Every forgery below is refused, and so is a Response finished in
 * another browser than the one that started the login (the test browser applies SameSite).
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refreshTokens, users } from "../src/db/schema.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { Browser } from "./support/browser.ts";
import { type ResponsePlan, startSamlIdp } from "./support/saml-idp.ts";

const ORIGIN = "http://lakesmith.test";
const ACS = `${ORIGIN}/api/v1/auth/sso/saml/acs`;
const FINISH_PATH = "/api/v1/auth/sso/saml/finish";
const SP_ENTITY = `${ORIGIN}/api/v1/auth/sso/saml/metadata`;

let plane: TestPlane;
let idp: Awaited<ReturnType<typeof startSamlIdp>>;

async function configure(certificates: string[], requireSignedResponse = false) {
  const res = await plane.call("PUT", "/api/v1/sso/saml", {
    token: ADMIN_KEY,
    body: {
      idp_sso_url: idp.ssoUrl,
      idp_entity_id: idp.entityId,
      idp_certificates: certificates,
      require_signed_response: requireSignedResponse,
    },
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

beforeAll(async () => {
  idp = await startSamlIdp("https://idp.example.com/saml");
  plane = await startTestPlane();
  await plane.call("PUT", "/api/v1/config", {
    token: ADMIN_KEY,
    body: { console_public_url: ORIGIN, login_failures_per_account: 1000, login_failures_per_client: 10_000 },
  });
  await configure([idp.keys.current.cert]);
  for (const [email, authType, role] of [
    ["sam@example.com", "saml", "Viewer"],
    ["victim@example.com", "saml", "Admin"],
    ["olivia@example.com", "oidc", "Viewer"],
  ] as const) {
    const res = await plane.call("POST", "/api/v1/users", {
      token: ADMIN_KEY,
      body: { full_name: email, email, role, auth_type: authType },
    });
    expect(res.status).toBe(201);
  }
  await plane.userWithRole("Viewer", "pat");
});
afterAll(async () => {
  plane?.close();
  await idp?.close();
});

const browser = () =>
  new Browser({
    local: { origin: ORIGIN, request: (path, init) => plane.app.request(path, init) as Promise<Response> },
  });

/** A whole login with the IdP answering as `plan` says: the redirect that ends it, or the refusal. */
async function signIn(plan: ResponsePlan) {
  idp.next(plan);
  return browser().navigate(`${ORIGIN}/api/v1/auth/sso/saml/login`, (u) => u.pathname === "/login/sso");
}

const codeOf = (url: URL | undefined) => new URLSearchParams(url?.hash.slice(1)).get("code") ?? "";

async function expectRefused(plan: ResponsePlan, reason: RegExp, status = 401) {
  const { stoppedAt, last } = await signIn(plan);
  expect(stoppedAt, "the login must not succeed").toBeUndefined();
  expect(last.response.status).toBe(status);
  expect(last.body).toMatch(reason);
}

/** The IdP's auto-posted form, as another browser would submit it from the IdP's page. */
const idpForm = (xml: string) => ({
  method: "POST",
  form: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString("base64") }),
  from: idp.ssoUrl,
});

/** Posts a Response to the ACS as the IdP's form would. */
const postToAcs = (xml: string) =>
  plane.call("POST", "/api/v1/auth/sso/saml/acs", {
    rawBody: new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString("base64") }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });

describe("SAML 2.0 single sign-on against a signing IdP", () => {
  it("publishes the service provider's metadata with its entity id and ACS URL", async () => {
    const res = await plane.call("GET", "/api/v1/auth/sso/saml/metadata");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/samlmetadata+xml");
    const xml = await res.text();
    expect(xml).toContain(`entityID="${SP_ENTITY}"`);
    expect(xml).toContain(`Location="${ACS}"`);
    expect(xml).toContain('WantAssertionsSigned="true"');
  });

  it("logs a user in with a signed assertion: one code, one token pair with the SSO refresh TTL", async () => {
    const { stoppedAt } = await signIn({ email: "Sam@Example.com" });
    const res = await plane.call("POST", "/api/v1/auth/sso/token", { body: { code: codeOf(stoppedAt) } });
    expect(res.status).toBe(200);
    const pair = (await res.json()) as { access_token: string };
    expect((await plane.call("GET", "/api/v1/health", { token: pair.access_token })).status).toBe(200);
    const [sam] = await plane.services.db.select().from(users).where(eq(users.email, "sam@example.com"));
    expect(sam?.lastLoginAt).not.toBeNull();
    const [token] = await plane.services.db
      .select()
      .from(refreshTokens)
      .where(eq(refreshTokens.userId, sam?.id ?? ""));
    const ttl = (token?.expiresAt.getTime() ?? 0) - (token?.createdAt.getTime() ?? 0);
    expect(Math.round(ttl / 1000)).toBeGreaterThan(7190);
    expect(Math.round(ttl / 1000)).toBeLessThanOrEqual(7201);
  });

  it("binds the login to its browser with an HttpOnly SameSite=Lax cookie, checked after the ACS", async () => {
    const start = await plane.call("GET", "/api/v1/auth/sso/saml/login");
    expect(start.status).toBe(302);
    const cookie = start.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^lakesmith_sso_saml=[^;]{20,};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Lax");
    expect(cookie).toContain("Path=/api/v1/auth/sso/saml");
    expect(cookie).not.toContain("Secure");

    // The IdP's cross-site POST carries no Lax cookie: the ACS verifies, then sends the browser on.
    idp.next({ email: "sam@example.com" });
    const sam = browser();
    const { stoppedAt: finish } = await sam.navigate(
      `${ORIGIN}/api/v1/auth/sso/saml/login`,
      (u) => u.pathname === FINISH_PATH,
    );
    expect(finish?.searchParams.get("ticket")).toMatch(/.{20,}/);
    const done = await sam.navigate(String(finish), (u) => u.pathname === "/login/sso");
    expect(codeOf(done.stoppedAt)).not.toBe("");
    // The ticket is good once.
    const again = await sam.navigate(String(finish), (u) => u.pathname === "/login/sso");
    expect(again.stoppedAt).toBeUndefined();
    expect(again.last.response.status).toBe(400);
    expect(again.last.body).toMatch(/unknown, expired or already finished/);
  });

  it("sets the binding cookie Secure when the console's public URL is https", async () => {
    await plane.call("PUT", "/api/v1/config", {
      token: ADMIN_KEY,
      body: { console_public_url: "https://lakesmith.example.com" },
    });
    try {
      const start = await plane.call("GET", "/api/v1/auth/sso/saml/login");
      expect(start.status).toBe(302);
      expect(start.headers.get("set-cookie")).toContain("Secure");
    } finally {
      await plane.call("PUT", "/api/v1/config", { token: ADMIN_KEY, body: { console_public_url: ORIGIN } });
    }
  });

  it("refuses a Response finished in another browser than the one that started the login", async () => {
    idp.next({ email: "victim@example.com" });
    /** Starts a login in `who` and stops where the IdP's form would post: that form's Response. */
    const startIn = async (who: Browser) => {
      const { stoppedAt } = await who.navigate(`${ORIGIN}/api/v1/auth/sso/saml/login`, (u) => u.href === ACS);
      expect(stoppedAt?.href).toBe(ACS);
      return idp.lastResponse();
    };

    // A browser that never started a login: no cookie at all.
    const response = await startIn(browser());
    const elsewhere = await browser().navigate(ACS, (u) => u.pathname === "/login/sso", idpForm(response));
    expect(elsewhere.stoppedAt, "the login must not succeed").toBeUndefined();
    expect(elsewhere.last.url.pathname).toBe(FINISH_PATH);
    expect(elsewhere.last.response.status).toBe(400);
    expect(elsewhere.last.response.headers.get("content-type")).toContain("text/html");
    expect(elsewhere.last.body).toMatch(/started in another browser/);

    // A browser that started a login of its own: its cookie is not the one this Response answers.
    const victims = await startIn(browser());
    const mallory = browser();
    await startIn(mallory);
    const swapped = await mallory.navigate(ACS, (u) => u.pathname === "/login/sso", idpForm(victims));
    expect(swapped.stoppedAt, "the login must not succeed").toBeUndefined();
    expect(swapped.last.response.status).toBe(400);
    expect(swapped.last.body).toMatch(/started in another browser/);

    // Without a browser (an API client posting to the ACS), nothing finishes either.
    const direct = await postToAcs(await startIn(browser()));
    expect(direct.status).toBe(303);
    const ticketUrl = new URL(direct.headers.get("location") ?? "");
    const finished = await plane.call("GET", ticketUrl.pathname + ticketUrl.search);
    expect(finished.status).toBe(400);
    expect(((await finished.json()) as { detail: string }).detail).toMatch(/started in another browser/);
  });

  it("accepts a signed Response around a signed assertion when signed responses are required", async () => {
    await configure([idp.keys.current.cert], true);
    try {
      expect((await signIn({ email: "sam@example.com", signResponse: true })).stoppedAt).toBeDefined();
      await expectRefused({ email: "sam@example.com" }, /signature/i);
    } finally {
      await configure([idp.keys.current.cert]);
    }
  });

  it("refuses a tampered assertion (the email changed after signing)", async () => {
    await expectRefused(
      {
        email: "sam@example.com",
        afterSigning: (xml) => xml.replace("sam@example.com", "victim@example.com"),
      },
      /signature/i,
    );
  });

  it("refuses an unsigned assertion, and a signed Response carrying an unsigned assertion", async () => {
    await expectRefused({ email: "sam@example.com", signAssertion: false }, /signature/i);
    await expectRefused({ email: "sam@example.com", signAssertion: false, signResponse: true }, /signature/i);
  });

  it("refuses an expired assertion (beyond the 60 s clock skew) and one not yet valid", async () => {
    await expectRefused(
      { email: "sam@example.com", validFrom: -900, validUntil: -120 },
      /expired|NotOnOrAfter|valid subject confirmation/i,
    );
    await expectRefused(
      { email: "sam@example.com", validFrom: 600, validUntil: 900 },
      /not yet|NotBefore|valid subject confirmation/i,
    );
  });

  it("refuses an assertion for another audience or another recipient", async () => {
    await expectRefused({ email: "sam@example.com", audience: "https://other-sp.example.com" }, /audience/i);
    await expectRefused(
      { email: "sam@example.com", recipient: "https://other-sp.example.com/acs" },
      /Recipient/,
    );
  });

  it("refuses a replayed Response, and a new Response reusing an accepted assertion id", async () => {
    const first = await signIn({ email: "sam@example.com", assertionId: "_reused-assertion" });
    expect(first.stoppedAt).toBeDefined();
    const replay = await postToAcs(idp.lastResponse());
    expect(replay.status).toBe(401);
    await expectRefused({ email: "sam@example.com", assertionId: "_reused-assertion" }, /already used/);
  });

  it("refuses a signature-wrapped assertion (the signed one hidden inside a forged one)", async () => {
    await expectRefused(
      {
        email: "sam@example.com",
        afterSigning: (xml) => {
          const signed = /<saml:Assertion[\s\S]*<\/saml:Assertion>/.exec(xml)?.[0] ?? "";
          const forged = signed
            .replace(/<(ds:)?Signature[\s\S]*<\/(ds:)?Signature>/, "")
            .replace("sam@example.com", "victim@example.com")
            .replace(/ ID="[^"]+"/, ' ID="_forged"')
            .replace("</saml:Issuer>", `</saml:Issuer>${signed}`);
          return xml.replace(signed, forged);
        },
      },
      /signature|assertion/i,
    );
  });

  it("refuses an unsolicited Response (no AuthnRequest of ours)", async () => {
    await signIn({ email: "sam@example.com" });
    const unsolicited = idp.lastResponse().replaceAll(/InResponseTo="[^"]+"/g, 'InResponseTo="_never-sent"');
    const res = await postToAcs(unsolicited);
    expect(res.status).toBe(401);
  });

  it("accepts either certificate during a rotation, and refuses a key it was not given", async () => {
    await configure([idp.keys.current.cert, idp.keys.next.cert]);
    expect((await signIn({ email: "sam@example.com", key: idp.keys.next })).stoppedAt).toBeDefined();
    expect((await signIn({ email: "sam@example.com", key: idp.keys.current })).stoppedAt).toBeDefined();
    await configure([idp.keys.current.cert]);
    await expectRefused({ email: "sam@example.com", key: idp.keys.next }, /signature/i);
  });

  it.each([
    ["olivia@example.com", /signs in with OIDC single sign-on, not SAML/],
    ["pat@example.com", /signs in with a password, not SAML/],
    ["stranger@example.com", /No Lakesmith user has the email stranger@example\.com/],
  ])("binds the protocol: %s is refused with a page that says why", async (email, reason) => {
    await expectRefused({ email }, reason, 403);
  });
});
