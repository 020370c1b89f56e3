/**
 * `GET/PUT/DELETE /api/v1/sso/oidc` and `/api/v1/sso/saml`: the installation's identity providers,
 * one per protocol. Admin only (API keys: `config:read` to read, `config:write` to change).
 */
import type { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { access, principalId } from "../auth/access.ts";
import type { SsoProtocol } from "../db/schema.ts";
import type { AppEnv } from "../http/env.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  OidcProviderSchema,
  OidcProviderUpdateSchema,
  SamlProviderSchema,
  SamlProviderUpdateSchema,
} from "./provider-schemas.ts";
import type { OidcProvider, SamlProvider } from "./providers.ts";
import { publicBase, SSO_PATHS } from "./urls.ts";

const tags = ["sso"];
const read = access.admin("config:read");
const write = access.admin("config:write");
const none = { 404: problemResponse("No provider of this protocol is configured.") };

const ONE_EACH =
  "One OIDC and one SAML 2.0 provider per installation; a user's auth type (`oidc` or `saml`) says which one they sign in through.";
const OIDC_SETUP = `${ONE_EACH} Register \`<console_public_url or request origin>${SSO_PATHS.oidcCallback}\` as the redirect URI at the provider, with the authorization code grant. The client secret is stored encrypted and never returned (\`has_client_secret\`).`;
const SAML_SETUP = `${ONE_EACH} Give the IdP the metadata at \`${SSO_PATHS.samlMetadata}\` (entity id and ACS URL). During a certificate rotation send both certificates. SAML logins run on the Node control plane only; on Cloudflare Workers the settings are kept but logins answer 501.`;

const oidcWire = (p: OidcProvider): z.infer<typeof OidcProviderSchema> => ({
  issuer: p.issuer,
  client_id: p.clientId,
  scopes: p.scopes,
  has_client_secret: p.clientSecret !== null,
  updated_at: p.updatedAt.toISOString(),
});

async function samlWire(c: Context<AppEnv>, p: SamlProvider): Promise<z.infer<typeof SamlProviderSchema>> {
  return {
    idp_sso_url: p.idpSsoUrl,
    idp_entity_id: p.idpEntityId,
    idp_certificates: p.idpCertificates,
    sp_entity_id: p.spEntityId ?? (await publicBase(c)) + SSO_PATHS.samlMetadata,
    require_signed_response: p.requireSignedResponse,
    updated_at: p.updatedAt.toISOString(),
  };
}

const getOidc = defineRoute({
  method: "get",
  path: "/api/v1/sso/oidc",
  tags,
  summary: "The OIDC identity provider",
  description: OIDC_SETUP,
  access: read,
  responses: { 200: jsonResponse("The provider.", OidcProviderSchema), ...none },
});
const putOidc = defineRoute({
  method: "put",
  path: "/api/v1/sso/oidc",
  tags,
  summary: "Set the OIDC identity provider",
  description: `${OIDC_SETUP} Discovery is read from the issuer at the next login, not now.`,
  access: write,
  request: { body: jsonBody(OidcProviderUpdateSchema) },
  responses: { 200: jsonResponse("Saved.", OidcProviderSchema) },
});
/** DELETE of a provider; its users cannot sign in until one is set again. */
const deleteRoute = (protocol: SsoProtocol) =>
  defineRoute({
    method: "delete",
    path: `/api/v1/sso/${protocol}`,
    tags,
    summary: `Remove the ${protocol === "oidc" ? "OIDC" : "SAML 2.0"} identity provider`,
    description: `${protocol === "oidc" ? "OIDC" : "SAML"} users cannot sign in until a provider is set again.`,
    access: write,
    responses: { 204: { description: "Removed." }, ...none },
  });
const getSaml = defineRoute({
  method: "get",
  path: "/api/v1/sso/saml",
  tags,
  summary: "The SAML 2.0 identity provider",
  description: SAML_SETUP,
  access: read,
  responses: { 200: jsonResponse("The provider.", SamlProviderSchema), ...none },
});
const putSaml = defineRoute({
  method: "put",
  path: "/api/v1/sso/saml",
  tags,
  summary: "Set the SAML 2.0 identity provider",
  description: SAML_SETUP,
  access: write,
  request: { body: jsonBody(SamlProviderUpdateSchema) },
  responses: { 200: jsonResponse("Saved.", SamlProviderSchema) },
});
export const ssoProviderRoutes = newRouter()
  .openapi(getOidc, async (c) => c.json(oidcWire(await c.var.services.sso.providers.oidc()), 200))
  .openapi(putOidc, async (c) => {
    const saved = await c.var.services.sso.providers.putOidc(
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(oidcWire(saved), 200);
  })
  .openapi(deleteRoute("oidc"), async (c) => {
    await c.var.services.sso.providers.remove("oidc");
    return c.body(null, 204);
  })
  .openapi(getSaml, async (c) => c.json(await samlWire(c, await c.var.services.sso.providers.saml()), 200))
  .openapi(putSaml, async (c) => {
    const saved = await c.var.services.sso.providers.putSaml(
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(await samlWire(c, saved), 200);
  })
  .openapi(deleteRoute("saml"), async (c) => {
    await c.var.services.sso.providers.remove("saml");
    return c.body(null, 204);
  });
