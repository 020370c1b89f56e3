/**
 * OpenID Connect login: the authorization code flow with PKCE (S256), `state` and `nonce`, through
 * `oauth4webapi` (Web APIs only, so the same code runs on Node and Workers).
 *
 * - start: discovery from the issuer (cached `DISCOVERY_TTL_MS`), a fresh state, nonce and PKCE
 *   verifier saved as a login in flight (`pending.ts`), and a browser binding (`binding.ts`): a random
 *   value set as an HttpOnly cookie whose hash the login keeps, so a callback link sent to someone
 *   else's browser finishes nothing.
 * - finish: the login is taken once by its state (a replayed or raced callback finds nothing); the
 *   code is exchanged with the verifier and the client secret (HTTP Basic, or none for a public
 *   client); the ID token's signature is checked against the provider's JWKS, and its issuer,
 *   audience (our client id), expiry and issued-at (`OIDC_CLOCK_TOLERANCE_S` either way), and nonce.
 * - The email comes from the ID token, or the userinfo endpoint when the token has none; an email
 *   the provider marks unverified (`email_verified: false`) is refused.
 * - Time is the service's clock, handed to the library as its skew from the system clock.
 * - http issuers are accepted only on loopback hosts (`provider-schemas.ts`).
 */
import type { Clock } from "@lakesmith/shared";
import { HTTPException } from "hono/http-exception";
import * as oauth from "oauth4webapi";
import { ApiError } from "../http/problem.ts";
import { newBinding, requireSameBrowser, restartLogin as restart } from "./binding.ts";
import type { SsoPending } from "./pending.ts";
import type { OidcProvider, SsoProviders } from "./providers.ts";

/** Leeway for the ID token's `exp`, `iat` and `nbf` against our clock, in seconds. */
export const OIDC_CLOCK_TOLERANCE_S = 60;
const DISCOVERY_TTL_MS = 10 * 60_000;

const refused = (detail: string) =>
  new ApiError(401, `The identity provider's answer was refused: ${detail}. Start the login again.`);

export class OidcFlow {
  private readonly discovered = new Map<string, { server: oauth.AuthorizationServer; expiresAt: number }>();

  constructor(
    private readonly providers: SsoProviders,
    private readonly pending: SsoPending,
    private readonly clock: Clock,
  ) {}

  /** The provider's authorization URL for a new login, and the browser binding to set as a cookie. */
  async start(redirectUri: string): Promise<{ url: string; binding: string }> {
    const provider = await this.providers.oidc();
    const server = await this.server(provider);
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const verifier = oauth.generateRandomCodeVerifier();
    const binding = await newBinding();
    await this.pending.save("oidc", state, {
      nonce,
      verifier,
      binding: binding.hash,
      redirect_uri: redirectUri,
      issuer: provider.issuer,
      client_id: provider.clientId,
    });
    if (!server.authorization_endpoint)
      throw new HTTPException(502, {
        message: `The OIDC provider ${provider.issuer} names no authorization_endpoint in its discovery document.`,
      });
    const url = new URL(server.authorization_endpoint);
    url.searchParams.set("client_id", provider.clientId);
    url.searchParams.set("redirect_uri", redirectUri);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("scope", provider.scopes);
    url.searchParams.set("state", state);
    url.searchParams.set("nonce", nonce);
    url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
    url.searchParams.set("code_challenge_method", "S256");
    return { url: url.href, binding: binding.cookie };
  }

  /** The verified email of the user the provider sent back to `callback`; 400 or 401 otherwise. */
  async finish(callback: URL, binding: string | undefined): Promise<string> {
    const state = callback.searchParams.get("state");
    if (!state) throw restart("The callback carries no state.");
    const saved = await this.pending.take("oidc", state);
    if (!saved) throw restart("This login is unknown, expired or already finished.");
    await requireSameBrowser(saved.binding, binding);
    const provider = await this.providers.oidc();
    if (provider.issuer !== saved.issuer || provider.clientId !== saved.client_id)
      throw restart("The OIDC provider settings changed during this login.");
    const server = await this.server(provider);
    const client: oauth.Client = {
      client_id: provider.clientId,
      [oauth.clockSkew]: Math.round((this.clock.now().getTime() - Date.now()) / 1000),
      [oauth.clockTolerance]: OIDC_CLOCK_TOLERANCE_S,
    };
    const options = { [oauth.allowInsecureRequests]: isHttp(provider) };
    const auth = provider.clientSecret ? oauth.ClientSecretBasic(provider.clientSecret) : oauth.None();
    try {
      const params = oauth.validateAuthResponse(server, client, callback, state);
      const response = await oauth.authorizationCodeGrantRequest(
        server,
        client,
        auth,
        params,
        saved.redirect_uri ?? "",
        saved.verifier ?? "",
        options,
      );
      const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
        expectedNonce: saved.nonce ?? "",
        requireIdToken: true,
      });
      await oauth.validateApplicationLevelSignature(server, response, options);
      const claims = oauth.getValidatedIdTokenClaims(result);
      if (!claims) throw refused("no ID token");
      let { email, email_verified: verified } = claims as { email?: unknown; email_verified?: unknown };
      if (typeof email !== "string") {
        const info = await oauth.processUserInfoResponse(
          server,
          client,
          claims.sub,
          await oauth.userInfoRequest(server, client, result.access_token, options),
        );
        email = info.email;
        verified = info.email_verified;
      }
      if (typeof email !== "string") throw refused("it asserts no email (request the email scope)");
      if (verified === false) throw refused(`the provider has not verified the email ${email}`);
      return email;
    } catch (err) {
      throw explain(err);
    }
  }

  private async server(provider: OidcProvider): Promise<oauth.AuthorizationServer> {
    const now = Date.now();
    const cached = this.discovered.get(provider.issuer);
    if (cached && cached.expiresAt > now) return cached.server;
    const issuer = new URL(provider.issuer);
    let server: oauth.AuthorizationServer;
    try {
      const response = await oauth.discoveryRequest(issuer, {
        algorithm: "oidc",
        [oauth.allowInsecureRequests]: isHttp(provider),
      });
      server = await oauth.processDiscoveryResponse(issuer, response);
    } catch (err) {
      throw new HTTPException(502, {
        message: `OIDC discovery from ${provider.issuer} failed (${(err as Error).message}); check the issuer in PUT /api/v1/sso/oidc.`,
      });
    }
    this.discovered.set(provider.issuer, { server, expiresAt: now + DISCOVERY_TTL_MS });
    return server;
  }
}

const isHttp = (provider: OidcProvider) => provider.issuer.startsWith("http:");

/** The library's errors as our answers: the provider's refusals and failed checks are 401s. */
function explain(err: unknown): unknown {
  if (err instanceof ApiError) return err;
  if (err instanceof oauth.AuthorizationResponseError)
    return refused(
      `the provider answered ${err.error}${err.error_description ? ` (${err.error_description})` : ""}`,
    );
  if (err instanceof oauth.ResponseBodyError)
    return refused(
      `the token endpoint answered ${err.error}${err.error_description ? ` (${err.error_description})` : ""}`,
    );
  if (err instanceof oauth.OperationProcessingError) return refused(err.message);
  // The library's own argument errors carry a code (ERR_INVALID_ARG_VALUE, ...); fetch's do not.
  if (err instanceof TypeError && "code" in err) return refused(err.message);
  if (err instanceof TypeError)
    return new HTTPException(502, { message: `The OIDC provider could not be reached: ${err.message}.` });
  return err;
}
