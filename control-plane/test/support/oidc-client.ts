/**
 * The control plane as an OIDC client of the loopback test provider (`oidc-provider.ts`). Apart from
 * the provider so that the workerd suite can import it without loading the provider.
 */
export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** The control plane's registration at the test provider, for an installation at `origin`. */
export const OIDC_TEST_CLIENT = (origin: string): TestClient => ({
  client_id: "lakesmith",
  client_secret: "lakesmith-client-secret-0123456789",
  redirect_uris: [`${origin}/api/v1/auth/sso/oidc/callback`],
});
