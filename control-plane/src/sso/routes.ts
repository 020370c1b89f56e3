/**
 * The public single sign-on routes: starting a login at the identity provider, its callback (OIDC)
 * or assertion consumer service (SAML), the SAML metadata, and the code exchange.
 *
 * - No credential: these routes are how a credential is obtained. The callback, the ACS and the
 *   code exchange are throttled as password logins are (`auth/throttle.ts`), a login start is refused
 *   with 429 while its client is blocked.
 * - A login ends with a redirect to the console, `<base>/login/sso#code=<one-time code>`; the
 *   console trades the code at `POST /api/v1/auth/sso/token`. Tokens never travel in a URL, and the
 *   code (in the fragment, so never sent to a server or logged) is good once, for 60 s.
 * - Both logins are bound to the browser that started them (`binding.ts`): OIDC checks its cookie at
 *   the callback; SAML at `/saml/finish`, the same-site GET the ACS redirects to with a one-time
 *   ticket, since the IdP's cross-site POST to the ACS carries no SameSite=Lax cookie.
 * - Refusals answer a browser (Accept: text/html) with a page saying why (`page.ts`), anyone else
 *   with problem+json.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { access } from "../auth/access.ts";
import type { ClientAddress } from "../auth/client-address.ts";
import { TokenPairSchema } from "../auth/routes.ts";
import { LoginThrottle, throttledLogin, tooManyLogins } from "../auth/throttle.ts";
import type { AppEnv } from "../http/env.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { setBindingCookie, takeBindingCookie } from "./binding.ts";
import { refusalPage } from "./page.ts";
import { REQUEST_TTL_MS } from "./pending.ts";
import { publicBase, SSO_PATHS, serviceProvider } from "./urls.ts";

const tags = ["auth"];

const HANDOFF =
  "On success: 302 to `<console_public_url or request origin>/login/sso#code=<code>`. The code is single-use, expires after 60 s and is exchanged at `POST /api/v1/auth/sso/token` for the same token pair a password login returns (refresh token lifetime `refresh_token_ttl_sso_seconds`); tokens never appear in a URL.";
const REFUSALS =
  "Refused when the provider's answer fails a check (401), or the asserted email belongs to no user, to a user of another auth type (a password user, or a user of the other SSO protocol) or to an Inactive user (403). A request that accepts `text/html` gets an HTML page saying why, others problem+json.";
const THROTTLED = "Throttled like `POST /api/v1/auth/login` (see its description): 429 with `Retry-After`.";
const SAML_NODE_ONLY =
  "SAML 2.0 runs on the Node control plane only (XML signature verification needs `xml-crypto`); on Cloudflare Workers this answers 501.";

const redirect = (description: string) => ({
  description,
  headers: { Location: { description: "Where the browser goes next.", schema: { type: "string" as const } } },
});
const throttledResponse = {
  429: problemResponse("Too many failed logins from this address; see `Retry-After`."),
};
const notConfigured = { 404: problemResponse("No provider of this protocol is configured.") };
const nodeOnly = { 501: problemResponse("SAML on Cloudflare Workers: not available there.") };
const refusals = {
  400: problemResponse("The callback is malformed, unknown, expired, already used, or from another browser."),
  401: problemResponse(
    "The provider's answer failed a check (signature, issuer, audience, time, nonce, ...).",
  ),
  403: problemResponse("No such user, another auth type, or an Inactive user."),
};

const oidcLogin = defineRoute({
  method: "get",
  path: "/api/v1/auth/sso/oidc/login",
  tags,
  summary: "Start an OIDC login (redirects to the identity provider)",
  description: `Authorization code flow with PKCE (S256), \`state\` and \`nonce\`; the login must finish within ${REQUEST_TTL_MS / 60_000} minutes in the same browser (an HttpOnly cookie binds it). Refused with 429 while the address is throttled.`,
  access: access.public,
  responses: {
    302: redirect("To the provider's authorization endpoint."),
    ...notConfigured,
    ...throttledResponse,
  },
});
const oidcCallback = defineRoute({
  method: "get",
  path: SSO_PATHS.oidcCallback,
  tags,
  summary: "OIDC redirect URI: finishes the login",
  description: `Register \`<console_public_url or request origin>${SSO_PATHS.oidcCallback}\` at the provider. The ID token's signature is checked against the provider's JWKS, and its issuer, audience, expiry (60 s of clock skew) and nonce. ${HANDOFF} ${REFUSALS} ${THROTTLED}`,
  access: access.public,
  request: {
    query: z.object({
      code: z.string().max(4096).optional(),
      state: z.string().max(512).optional(),
      error: z.string().max(256).optional(),
      error_description: z.string().max(2048).optional(),
      iss: z.string().max(2048).optional(),
    }),
  },
  responses: {
    302: redirect("To the console with a one-time code."),
    ...refusals,
    ...notConfigured,
    ...throttledResponse,
  },
});
const samlLogin = defineRoute({
  method: "get",
  path: "/api/v1/auth/sso/saml/login",
  tags,
  summary: "Start a SAML 2.0 login (HTTP-Redirect binding)",
  description: `Sends an AuthnRequest to the IdP's single sign-on URL; the response must come back within ${REQUEST_TTL_MS / 60_000} minutes and the login must end in the same browser (an HttpOnly, SameSite=Lax cookie binds it; see \`${SSO_PATHS.samlFinish}\`). Refused with 429 while the address is throttled. ${SAML_NODE_ONLY}`,
  access: access.public,
  responses: {
    302: redirect("To the IdP with the AuthnRequest."),
    ...notConfigured,
    ...throttledResponse,
    ...nodeOnly,
  },
});
const samlAcs = defineRoute({
  method: "post",
  path: SSO_PATHS.samlAcs,
  tags,
  summary: "SAML assertion consumer service (HTTP-POST binding): finishes the login",
  description: `Takes the IdP's \`SAMLResponse\`. The assertion must be signed (the Response too when \`require_signed_response\`) by one of the IdP's certificates, issued by its entity id, for this audience, to this ACS URL as Recipient, within NotBefore/NotOnOrAfter (60 s of clock skew), in response to a request of ours, and never seen before (each assertion id is accepted once). On success: 303 to \`${SSO_PATHS.samlFinish}?ticket=<ticket>\`, where the browser binding is checked: the IdP's POST arrives cross-site and so carries no SameSite=Lax cookie, the redirected GET does. Refused (401) when the response fails a check, 403 when it asserts no email. ${THROTTLED} ${SAML_NODE_ONLY}`,
  access: access.public,
  request: {
    body: {
      content: {
        "application/x-www-form-urlencoded": {
          schema: z.object({
            SAMLResponse: z.string().min(1).max(1_000_000),
            RelayState: z.string().max(1024).optional(),
          }),
        },
      },
      required: true,
    },
  },
  responses: {
    303: redirect(`To \`${SSO_PATHS.samlFinish}\` with a one-time ticket.`),
    ...refusals,
    ...notConfigured,
    ...throttledResponse,
    ...nodeOnly,
  },
});
const samlFinish = defineRoute({
  method: "get",
  path: SSO_PATHS.samlFinish,
  tags,
  summary: "SAML login, last step: checks the browser and finishes the login",
  description: `Where the ACS sends the browser. The ticket (single-use, 60 s) names the verified response; the request must carry the cookie set by \`GET /api/v1/auth/sso/saml/login\` in this browser, or it is refused (400, "started in another browser"): a Response carried to another browser (login CSRF, a forwarded form) finishes nothing. Then the asserted email is matched to a user. ${HANDOFF} ${REFUSALS} ${THROTTLED} ${SAML_NODE_ONLY}`,
  access: access.public,
  request: { query: z.object({ ticket: z.string().min(1).max(256) }) },
  responses: {
    302: redirect("To the console with a one-time code."),
    ...refusals,
    ...throttledResponse,
    ...nodeOnly,
  },
});
const samlMetadata = defineRoute({
  method: "get",
  path: SSO_PATHS.samlMetadata,
  tags,
  summary: "This service provider's SAML 2.0 metadata",
  description: `Entity id (\`sp_entity_id\`, by default this URL), the ACS URL (HTTP-POST) and the emailAddress NameID format; give it to the IdP. ${SAML_NODE_ONLY}`,
  access: access.public,
  responses: {
    200: {
      description: "SAML metadata XML.",
      content: { "application/samlmetadata+xml": { schema: z.string() } },
    },
    ...nodeOnly,
  },
});
const tokenExchange = defineRoute({
  method: "post",
  path: "/api/v1/auth/sso/token",
  tags,
  summary: "Exchange a single sign-on login code for a token pair",
  description: `The code from the redirect that ends an OIDC or SAML login (\`#code=...\`). Single-use, 60 s. Records the user's login time. ${THROTTLED}`,
  access: access.public,
  request: {
    body: jsonBody(z.strictObject({ code: z.string().min(1).max(256) }).openapi("SsoCodeExchange")),
  },
  responses: {
    200: jsonResponse("Token pair.", TokenPairSchema),
    401: problemResponse("Unknown, expired or used code, or the user can no longer sign in."),
    422: problemResponse("Validation failed."),
    ...throttledResponse,
  },
});

/** The public SSO routes; `clientAddress` tells the throttle where a request comes from. */
export const ssoRoutes = (clientAddress: ClientAddress) => {
  const throttle = (c: Context<AppEnv>) => {
    const { db, config, clock } = c.var.services;
    return new LoginThrottle(db, config, clock);
  };
  /** 429 while the client is blocked from the step that ends this login. */
  const refuseIfThrottled = async (c: Context<AppEnv>, step: string) => {
    const wait = await throttle(c).secondsUntilAllowed(step, clientAddress(c));
    if (wait > 0) throw tooManyLogins(wait);
  };
  /** Runs a login step under the throttle and redirects to where `attempt` says. */
  const step = async (
    c: Context<AppEnv>,
    name: string,
    attempt: (base: string) => Promise<string>,
    status: 302 | 303 = 302,
  ) => {
    const base = await publicBase(c);
    try {
      const location = await throttledLogin(throttle(c), name, clientAddress(c), () => attempt(base));
      return c.redirect(location, status);
    } catch (err) {
      return refusalPage(c, err, base + SSO_PATHS.consoleLogin);
    }
  };
  /** The console page that trades a finished login's one-time code. */
  const landing = (base: string, code: string) =>
    `${base}${SSO_PATHS.consoleLanding}#code=${encodeURIComponent(code)}`;

  return newRouter()
    .openapi(oidcLogin, async (c) => {
      await refuseIfThrottled(c, "sso:oidc");
      const base = await publicBase(c);
      const { url, binding } = await c.var.services.sso.oidc.start(base + SSO_PATHS.oidcCallback);
      setBindingCookie(c, "oidc", binding, base);
      return c.redirect(url, 302);
    })
    .openapi(oidcCallback, async (c) => {
      const binding = takeBindingCookie(c, "oidc");
      return step(c, "sso:oidc", async (base) => {
        const { sso } = c.var.services;
        const email = await sso.oidc.finish(new URL(c.req.url), binding);
        return landing(base, await sso.login.complete("oidc", email));
      });
    })
    .openapi(samlLogin, async (c) => {
      await refuseIfThrottled(c, "sso:saml");
      const base = await publicBase(c);
      const { url, binding } = await c.var.services.sso.saml.start(await serviceProvider(c, base));
      setBindingCookie(c, "saml", binding, base);
      return c.redirect(url, 302);
    })
    .openapi(samlAcs, async (c) => {
      const { SAMLResponse } = c.req.valid("form");
      return step(
        c,
        "sso:saml",
        async (base) => {
          const ticket = await c.var.services.sso.saml.accept(await serviceProvider(c, base), SAMLResponse);
          return `${base}${SSO_PATHS.samlFinish}?ticket=${encodeURIComponent(ticket)}`;
        },
        303,
      );
    })
    .openapi(samlFinish, async (c) => {
      const { ticket } = c.req.valid("query");
      const binding = takeBindingCookie(c, "saml");
      return step(c, "sso:saml", async (base) => {
        const { sso } = c.var.services;
        const email = await sso.saml.finish(ticket, binding);
        return landing(base, await sso.login.complete("saml", email));
      });
    })
    .openapi(samlMetadata, async (c) => {
      const base = await publicBase(c);
      const xml = c.var.services.sso.saml.metadata(await serviceProvider(c, base));
      return c.body(xml, 200, { "content-type": "application/samlmetadata+xml" });
    })
    .openapi(tokenExchange, async (c) => {
      const { code } = c.req.valid("json");
      const pair = await throttledLogin(throttle(c), "sso:code", clientAddress(c), () =>
        c.var.services.sso.login.exchange(code),
      );
      return c.json(pair, 200);
    });
};
