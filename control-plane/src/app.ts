/**
 * `createApp(deps)` builds the control plane's Hono app. It knows nothing about its runtime: the
 * entry files (`node.ts`, `worker.ts`) pass in the database and whatever else differs.
 *
 * @example
 * const app = createApp({ db });
 * const res = await app.request("/healthz");
 */
import { bodyLimit } from "hono/body-limit";
import { agentRoutes } from "./agents/routes.ts";
import { apiKeyRoutes } from "./api-keys/routes.ts";
import type { ClientAddress } from "./auth/client-address.ts";
import { guard } from "./auth/guard.ts";
import { authRoutes } from "./auth/routes.ts";
import { catalogBrowseRoutes } from "./catalog-connections/browse-routes.ts";
import { catalogConnectionRoutes } from "./catalog-connections/routes.ts";
import { catalogRoutes } from "./catalogs/routes.ts";
import { configRoutes } from "./config/routes.ts";
import { crunchRoutes } from "./crunch/routes.ts";
import { docsRoutes } from "./docs/routes.ts";
import { featureFlagRoutes } from "./feature-flags/routes.ts";
import { healthRoutes } from "./health/routes.ts";
import { handleError, problemResponse } from "./http/problem.ts";
import { newRouter } from "./http/router.ts";
import { jobRoutes } from "./jobs/routes.ts";
import { managedTableRoutes } from "./managed-tables/routes.ts";
import { notificationRoutes } from "./notifications/routes.ts";
import { prefixRunRoutes } from "./object-maintenance/conversion/routes.ts";
import { discoveryRoutes } from "./object-maintenance/discovery/routes.ts";
import { objectMaintenanceRoutes } from "./object-maintenance/routes.ts";
import { onboardingRoutes } from "./onboarding/routes.ts";
import { opportunityRoutes } from "./opportunities/routes.ts";
import { optimusRoutes } from "./optimus/routes.ts";
import { partitionExpirationRoutes } from "./partition-expiration/routes.ts";
import { pendingDeletionRoutes } from "./pending-deletions/routes.ts";
import { policyRoutes } from "./policies/routes.ts";
import { savingsRoutes } from "./savings/routes.ts";
import { scheduleRoutes } from "./schedules/routes.ts";
import { type AppDeps, createServices, type Services } from "./services.ts";
import { slotRoutes } from "./slots/routes.ts";
import { ssoProviderRoutes } from "./sso/provider-routes.ts";
import { ssoRoutes } from "./sso/routes.ts";
import { tableActionRoutes } from "./table-actions/routes.ts";
import { tableRoutes } from "./tables/routes.ts";
import { userRoutes } from "./users/routes.ts";
import { vacuumRoutes } from "./vacuum/routes.ts";

/** Request bodies above this size get 413. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/** What differs between the runtimes that serve the app, besides its services. */
export interface AppOptions {
  /** Where a request comes from (`auth/client-address.ts`); without it all callers share one address. */
  clientAddress?: ClientAddress;
}

export function createApp(deps: AppDeps, options: AppOptions = {}) {
  const services = createServices(deps);
  return buildApp(services, options);
}

export function buildApp(services: Services, options: AppOptions = {}) {
  const app = newRouter();
  app.onError(handleError);
  app.notFound((c) => problemResponse(404, `No route for ${c.req.method} ${c.req.path}.`));

  app.use("*", async (c, next) => {
    c.set("services", services);
    await next();
  });
  app.use("*", guard());
  const limitBody = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => problemResponse(413, `Request bodies are limited to ${MAX_BODY_BYTES} bytes.`),
  });
  // GET and HEAD carry no body; skipping them also spares Node from building a full Request object.
  app.use("/api/*", (c, next) =>
    c.req.method === "GET" || c.req.method === "HEAD" ? next() : limitBody(c, next),
  );

  app.route("/", healthRoutes);
  const clientAddress = options.clientAddress ?? (() => undefined);
  app.route("/", authRoutes(clientAddress));
  app.route("/", ssoRoutes(clientAddress));
  app.route("/", ssoProviderRoutes);
  app.route("/", userRoutes);
  app.route("/", apiKeyRoutes);
  app.route("/", configRoutes);
  app.route("/", featureFlagRoutes);
  app.route("/", agentRoutes);
  app.route("/", jobRoutes);
  app.route("/", tableRoutes);
  app.route("/", scheduleRoutes);
  app.route("/", onboardingRoutes);
  app.route("/", slotRoutes);
  app.route("/", crunchRoutes);
  app.route("/", vacuumRoutes);
  app.route("/", opportunityRoutes);
  app.route("/", optimusRoutes);
  app.route("/", partitionExpirationRoutes);
  app.route("/", pendingDeletionRoutes);
  app.route("/", catalogConnectionRoutes);
  app.route("/", catalogBrowseRoutes);
  app.route("/", catalogRoutes);
  app.route("/", tableActionRoutes);
  app.route("/", objectMaintenanceRoutes);
  app.route("/", discoveryRoutes);
  app.route("/", prefixRunRoutes);
  app.route("/", notificationRoutes);
  app.route("/", savingsRoutes);
  app.route("/", policyRoutes);
  app.route("/", managedTableRoutes);

  app.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "http",
    scheme: "bearer",
    description: "An access token from `POST /api/v1/auth/login`, or an API key (`lsk_...`).",
  });
  const document = () =>
    app.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Lakesmith control plane API",
        version: services.version,
        description: API_DESCRIPTION,
      },
      security: [{ bearer: [] }],
    });
  app.route("/", docsRoutes(document));
  return app;
}

export type App = ReturnType<typeof buildApp>;

const API_DESCRIPTION = `Policy-driven lakehouse optimization platform.

**Credentials.** Every \`/api/v1\` route but \`/auth/*\` needs \`Authorization: Bearer <credential>\`, where the
credential is an access token (from \`POST /api/v1/auth/login\` or \`/auth/refresh\`) or an API key.

**Single sign-on.** Users of auth type \`oidc\` or \`saml\` sign in in a browser at \`GET /api/v1/auth/sso/oidc/login\`
or \`/api/v1/auth/sso/saml/login\`; the login ends with a redirect to \`<console>/login/sso#code=<code>\`, and the
console trades the single-use code at \`POST /api/v1/auth/sso/token\` for a token pair. One OIDC and one SAML
provider per installation (\`/api/v1/sso/oidc\`, \`/api/v1/sso/saml\`, Admin). SAML runs on the Node control plane
only: on Cloudflare Workers its routes answer 501. With \`sso_enforced\` on, only the break-glass account may use a
password.

**Roles.** Viewer may call GET routes; Editor may also write; Admin may also manage users, API keys,
settings and feature flags, and read these docs.

**API key scopes.** \`<resource>:read\` and \`<resource>:write\` for each resource group (tables, schedules,
crunch, vacuum, deletions, catalogs, connections, policies, optimus, object-maintenance, users, config,
agents, savings, metrics), plus \`admin\`, which grants everything. \`:write\` includes \`:read\`. Each operation states what it needs.

**Errors.** Every error is \`application/problem+json\` with \`type\`, \`title\`, \`status\`, \`detail\`, and
\`errors: [{path, message}]\` for validation. 400 malformed JSON, 401 missing or bad credential, 403 role or
scope, 404 unknown id or route, 409 conflict, 413 body too large, 415 body not JSON, 422 validation, 429
too many failed logins (with \`Retry-After\`). A 413 leaves a keep-alive connection open for the next request
(the server reads and drops the rest of the body), except for a body that declares more than 4 times the
limit in its \`Content-Length\`, whose 413 says \`Connection: close\`.

**Lists** take \`offset\` and \`limit\` and answer \`{items, total, offset, limit}\`, except the catalog browse of
\`/api/v1/catalogs\` (resource-management API), which pages by keyset: it takes \`page_size\` and \`page_token\` and
answers \`{items, total, page_size, next_page_token}\`.`;
