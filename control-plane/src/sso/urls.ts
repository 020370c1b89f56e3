/**
 * The absolute addresses single sign-on gives out: the OIDC redirect URI, the SAML ACS and metadata
 * URLs (registered at the identity provider) and the console pages a login ends on. They are built
 * on `console_public_url`, or the request's origin when it is unset, so the console and the API
 * share one origin.
 */
import type { Context } from "hono";
import type { AppEnv } from "../http/env.ts";
import type { ServiceProvider } from "./saml.ts";

export const SSO_PATHS = {
  oidcCallback: "/api/v1/auth/sso/oidc/callback",
  samlAcs: "/api/v1/auth/sso/saml/acs",
  /** Where the ACS sends the browser to check its binding cookie (`binding.ts`). */
  samlFinish: "/api/v1/auth/sso/saml/finish",
  samlMetadata: "/api/v1/auth/sso/saml/metadata",
  /** The console page that reads `#code=...` and exchanges it at `POST /api/v1/auth/sso/token`. */
  consoleLanding: "/login/sso",
  consoleLogin: "/login",
} as const;

/** `console_public_url` without a trailing slash, or the request's origin. */
export async function publicBase(c: Context<AppEnv>): Promise<string> {
  const { values } = await c.var.services.config.get();
  return (values.console_public_url ?? new URL(c.req.url).origin).replace(/\/+$/, "");
}

/** This installation as a SAML service provider, as seen from `base`. */
export async function serviceProvider(c: Context<AppEnv>, base: string): Promise<ServiceProvider> {
  const metadataUrl = base + SSO_PATHS.samlMetadata;
  return { entityId: await c.var.services.sso.saml.entityId(metadataUrl), acsUrl: base + SSO_PATHS.samlAcs };
}
