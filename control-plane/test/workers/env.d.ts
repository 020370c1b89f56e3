import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      DB: D1Database;
      TEST_MIGRATIONS: D1Migration[];
      /** A loopback OpenID Connect provider (`oidc-provider`) started by the suite's config. */
      TEST_OIDC_ISSUER: string;
    }
  }
}
