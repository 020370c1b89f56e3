/** Builds the services the routes call, from the app's dependencies. */

import { type Clock, systemClock } from "@lakesmith/shared";
import type { Context } from "hono";
import { type Hub, LocalHub } from "./agents/hub.ts";
import { AgentService } from "./agents/service.ts";
import { ApiKeyService } from "./api-keys/service.ts";
import { PrincipalCache } from "./auth/principal-cache.ts";
import { AuthService } from "./auth/service.ts";
import { signingKeyLoader } from "./auth/signing-key.ts";
import { CatalogBrowser } from "./catalog-connections/browse.ts";
import { CatalogJobService } from "./catalog-connections/jobs.ts";
import { CatalogSchedule } from "./catalog-connections/scheduled.ts";
import { CatalogConnectionService } from "./catalog-connections/service.ts";
import { CatalogTableRefs } from "./catalog-connections/table-ref.ts";
import { CatalogDirectory } from "./catalogs/directory.ts";
import { ConfigService } from "./config/service.ts";
import { CrunchService } from "./crunch/service.ts";
import type { Db } from "./db/index.ts";
import { type StatementCache, useStatementCache } from "./db/statement-cache.ts";
import type { DocsAssets } from "./docs/assets.ts";
import { FeatureFlagService } from "./feature-flags/service.ts";
import { HealthService } from "./health/service.ts";
import { CancelService } from "./jobs/cancel.ts";
import { type JobKind, JobKindRegistry } from "./jobs/kinds.ts";
import { DEFAULT_LEASE_TIMINGS, JobService, type LeaseTimings } from "./jobs/service.ts";
import { PLATFORM_JOB_KINDS } from "./kinds.ts";
import { ManagedTableService } from "./managed-tables/service.ts";
import type { Transports } from "./notifications/dispatcher.ts";
import { NotificationService } from "./notifications/service.ts";
import { ConversionSchedule } from "./object-maintenance/conversion/scheduled.ts";
import { PrefixRunService } from "./object-maintenance/conversion/service.ts";
import { DiscoverySchedule } from "./object-maintenance/discovery/scheduled.ts";
import { DiscoveryService } from "./object-maintenance/discovery/service.ts";
import { ObjectMaintenanceService } from "./object-maintenance/service.ts";
import { OnboardingService } from "./onboarding/service.ts";
import { OpportunityService } from "./opportunities/service.ts";
import { OptimusSchedule } from "./optimus/scheduled.ts";
import { OptimusService } from "./optimus/service.ts";
import { PartitionExpirationService } from "./partition-expiration/service.ts";
import { HardDeleteService } from "./pending-deletions/hard-delete.ts";
import { PendingDeletionService } from "./pending-deletions/service.ts";
import { PolicyEngine } from "./policies/engine.ts";
import { PolicyPreview } from "./policies/preview.ts";
import { PolicyService } from "./policies/service.ts";
import { SavingsService } from "./savings/service.ts";
import { LinkedJobRelease } from "./scheduler/linked.ts";
import { Scheduler } from "./scheduler/scheduler.ts";
import { ScheduleService } from "./schedules/service.ts";
import type { Keyring } from "./secrets/keyring.ts";
import { SlotService } from "./slots/service.ts";
import { SsoLogin } from "./sso/login.ts";
import { OidcFlow } from "./sso/oidc.ts";
import { SsoPending } from "./sso/pending.ts";
import { SsoProviders } from "./sso/providers.ts";
import { type SamlEngine, SamlFlow } from "./sso/saml.ts";
import { OnboardingHold } from "./table-actions/hold.ts";
import { RunService } from "./table-actions/runs.ts";
import { TableActionService } from "./table-actions/service.ts";
import { TableService } from "./tables/service.ts";
import { UserService } from "./users/service.ts";
import { VacuumService } from "./vacuum/service.ts";

/** What `createApp` needs from its runtime. */
export interface AppDeps {
  db: Db;
  /** Prepared read-only statements, where the runtime can keep them (Node's embedded file). */
  statements?: StatementCache;
  clock?: Clock;
  /** HMAC key for access tokens; when absent the installation generates and stores one. */
  jwtSecret?: string;
  /** Encrypts the secrets stored in the database (signing key, secret settings). */
  secrets: Keyring;
  /** Where the offline docs pages load Swagger UI and Redoc from. */
  docsAssets?: DocsAssets;
  version?: string;
  /** Lease, offer and retry timings of jobs (tests shorten them). */
  leaseTimings?: Partial<LeaseTimings>;
  /** The job kinds the engine runs; the platform's own (`kinds.ts`) by default. */
  jobKinds?: readonly JobKind<unknown>[];
  /**
   * The hub that holds agent sockets. By default a `LocalHub` in this process (Node); the Worker
   * passes one that forwards to its `AgentHub` Durable Object.
   */
  hub?: (parts: { jobs: JobService; agents: AgentService; clock: Clock }) => Hub;
  /** Verifies SAML XML signatures (`adapter/node-saml.ts`); absent on Workers, where SAML answers 501. */
  saml?: SamlEngine;
  /** Accepts agent WebSockets on `GET /api/v1/agents/connect`; absent where agents can't connect. */
  agentGateway?: (services: Services) => AgentGateway;
  /** How notifications leave: the runtime's mailer (none: email rows are skipped, saying why). */
  notifications?: Transports;
}

/** Turns an authenticated agent's upgrade request into a WebSocket held by the hub. */
export interface AgentGateway {
  accept(c: Context, agentId: string): Response | Promise<Response>;
}

export interface Services {
  db: Db;
  clock: Clock;
  auth: AuthService;
  users: UserService;
  apiKeys: ApiKeyService;
  config: ConfigService;
  secrets: Keyring;
  /** Single sign-on: the identity providers and both protocols' logins. */
  sso: { providers: SsoProviders; login: SsoLogin; oidc: OidcFlow; saml: SamlFlow };
  featureFlags: FeatureFlagService;
  health: HealthService;
  jobs: JobService;
  /** Cancels jobs of every kind and tells their agents. */
  cancel: CancelService;
  agents: AgentService;
  tables: TableService;
  schedules: ScheduleService;
  onboarding: OnboardingService;
  slots: SlotService;
  crunch: CrunchService;
  vacuum: VacuumService;
  /** Table opportunities: the latest measurement per table, and scans when it is stale. */
  opportunities: OpportunityService;
  /** Optimus submissions and their runs (`query_log_analysis` jobs). */
  optimus: OptimusService;
  partitionExpiration: PartitionExpirationService;
  pendingDeletions: PendingDeletionService;
  hardDelete: HardDeleteService;
  catalogConnections: CatalogConnectionService;
  /** Tests and syncs of catalog connections. */
  catalogJobs: CatalogJobService;
  catalogBrowser: CatalogBrowser;
  /** Document 2's browse of every connection's catalogs. */
  catalogDirectory: CatalogDirectory;
  /** Document 2's actions on a catalog table, and its runs. */
  tableActions: TableActionService;
  tableRuns: RunService;
  objectMaintenance: ObjectMaintenanceService;
  /** Discovery attempts of object-maintenance locations. */
  discovery: DiscoveryService;
  /** Managed prefixes' conversion and maintenance jobs: actions and runs. */
  prefixRuns: PrefixRunService;
  scheduler: Scheduler;
  /** The notification outbox and the reports; its `tick` runs beside the scheduler's. */
  notifications: NotificationService;
  /** Savings and daily metrics per table, per catalog and in total. */
  savings: SavingsService;
  /** Document 2's policies at catalog, prefix and table scope. */
  policies: PolicyService;
  /** Dry runs of a policy's destructive actions before it is enabled. */
  policyPreview: PolicyPreview;
  managedTables: ManagedTableService;
  hub: Hub;
  agentGateway: AgentGateway | undefined;
  docsAssets: DocsAssets | undefined;
  version: string;
}

export function createServices(deps: AppDeps): Services {
  const clock = deps.clock ?? systemClock;
  if (deps.statements) useStatementCache(deps.db, deps.statements);
  const config = new ConfigService(deps.db, deps.secrets, clock);
  const principals = new PrincipalCache(clock);
  const clearPrincipals = () => principals.clear();
  const timings = { ...DEFAULT_LEASE_TIMINGS, ...deps.leaseTimings };
  const jobs = new JobService(
    deps.db,
    clock,
    new JobKindRegistry(deps.jobKinds ?? PLATFORM_JOB_KINDS),
    timings,
  );
  const agents = new AgentService(deps.db, clock, timings.heartbeatMs * 3);
  const hub = deps.hub ? deps.hub({ jobs, agents, clock }) : new LocalHub(jobs, agents, clock);
  jobs.onWork(() => hub.poke());
  const cancel = new CancelService(jobs.engine, hub);
  const catalogConnections = new CatalogConnectionService(deps.db, clock, deps.secrets, cancel);
  const catalogRefs = new CatalogTableRefs(deps.db, catalogConnections);
  const onboarding = new OnboardingService(deps.db, clock, jobs, catalogRefs);
  const tables = new TableService(deps.db, clock, jobs, onboarding, catalogRefs, deps.statements);
  const slots = new SlotService(deps.db, config);
  const pendingDeletions = new PendingDeletionService(deps.db, clock, jobs, tables, catalogRefs);
  const catalogJobs = new CatalogJobService(deps.db, clock, jobs, config, catalogConnections);
  const discovery = new DiscoveryService(deps.db, clock, jobs, cancel, config);
  const prefixRuns = new PrefixRunService(deps.db, jobs);
  const policies = new PolicyService(deps.db, clock);
  const savings = new SavingsService(deps.db, clock, config);
  const opportunities = new OpportunityService(deps.db, clock, jobs, tables, catalogRefs);
  const optimus = new OptimusService(deps.db, clock, jobs, cancel);
  const policyEngine = new PolicyEngine(deps.db, clock, config, tables, jobs, pendingDeletions, {
    opportunities,
  });
  const crunch = new CrunchService(deps.db, clock, jobs, tables, config, catalogRefs);
  const vacuum = new VacuumService(jobs, tables, pendingDeletions);
  const partitionExpiration = new PartitionExpirationService(clock, jobs, tables, config);
  const tableRuns = new RunService(deps.db, jobs, onboarding, catalogRefs, pendingDeletions);
  const auth = new AuthService(
    deps.db,
    config,
    signingKeyLoader(deps.db, deps.secrets, deps.jwtSecret),
    clock,
    principals,
  );
  const services: Services = {
    db: deps.db,
    clock,
    config,
    secrets: deps.secrets,
    auth,
    sso: ssoServices(deps, clock, auth),
    users: new UserService(deps.db, clock, clearPrincipals, (id) => auth.revokeRefreshTokens(id)),
    apiKeys: new ApiKeyService(deps.db, clock, clearPrincipals),
    featureFlags: new FeatureFlagService(deps.db, clock),
    health: new HealthService(deps.db),
    jobs,
    cancel,
    agents,
    tables,
    schedules: new ScheduleService(deps.db, clock, tables, slots),
    onboarding,
    slots,
    crunch,
    vacuum,
    opportunities,
    optimus,
    partitionExpiration,
    pendingDeletions,
    hardDelete: new HardDeleteService(deps.db, clock, jobs, tables),
    catalogConnections,
    catalogJobs,
    catalogBrowser: new CatalogBrowser(deps.db),
    catalogDirectory: new CatalogDirectory(deps.db),
    tableActions: new TableActionService(
      deps.db,
      clock,
      config,
      jobs,
      tables,
      crunch,
      vacuum,
      partitionExpiration,
      tableRuns,
    ),
    tableRuns,
    objectMaintenance: new ObjectMaintenanceService(deps.db, clock, discovery),
    discovery,
    prefixRuns,
    scheduler: new Scheduler(deps.db, clock, jobs, config, {
      catalogs: new CatalogSchedule(deps.db, catalogJobs, cancel),
      linked: new LinkedJobRelease(deps.db, jobs, tables, catalogRefs, cancel),
      onboardingHold: new OnboardingHold(deps.db, jobs, tables, cancel),
      discovery: new DiscoverySchedule(deps.db, discovery),
      conversions: new ConversionSchedule(deps.db, prefixRuns),
      optimus: new OptimusSchedule(deps.db, optimus),
      policies: policyEngine,
    }),
    notifications: new NotificationService(deps.db, clock, config, deps.notifications ?? {}),
    savings,
    policies,
    policyPreview: new PolicyPreview(deps.db, clock, config, jobs, pendingDeletions, policies),
    managedTables: new ManagedTableService(deps.db, config, opportunities, savings),
    hub,
    agentGateway: undefined,
    docsAssets: deps.docsAssets,
    version: deps.version ?? "0.1.0",
  };
  services.agentGateway = deps.agentGateway?.(services);
  return services;
}

function ssoServices(deps: AppDeps, clock: Clock, auth: AuthService): Services["sso"] {
  const providers = new SsoProviders(deps.db, deps.secrets, clock);
  const pending = new SsoPending(deps.db, clock);
  return {
    providers,
    login: new SsoLogin(deps.db, auth, pending),
    oidc: new OidcFlow(providers, pending, clock),
    saml: new SamlFlow(deps.db, providers, pending, clock, deps.saml),
  };
}
