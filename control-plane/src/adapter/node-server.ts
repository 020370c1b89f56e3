/**
 * The control plane as a Node server: HTTP and agent WebSockets on one port, the in-process hub,
 * and the timers that keep it moving. `node.ts` runs it from the environment; tests and benchmarks
 * start it directly (port 0, a temporary database, short leases).
 */

import type { AddressInfo } from "node:net";
import { type HttpBindings, serve } from "@hono/node-server";
import type { Clock } from "@lakesmith/shared";
import { keepAliveAfterUnreadBodies } from "@lakesmith/shared/keep-alive";
import { WebSocketServer } from "ws";
import { LocalHub } from "../agents/hub.ts";
import { buildApp, MAX_BODY_BYTES } from "../app.ts";
import { clientFromForwarded } from "../auth/client-address.ts";
import { type BootstrapResult, bootstrap } from "../bootstrap/bootstrap.ts";
import type { LeaseTimings } from "../jobs/service.ts";
import type { Mailer } from "../notifications/transport.ts";
import { type AppDeps, createServices, type Services } from "../services.ts";
import { nodeAgentGateway } from "./node-agent-gateway.ts";
import { openNodeDatabase } from "./node-db.ts";
import { nodeSamlEngine } from "./node-saml.ts";
import { nodeKeyring } from "./node-secrets-key.ts";

export interface NodeServerOptions {
  dbUrl: string;
  dbAuthToken?: string | undefined;
  port: number;
  host?: string;
  clock?: Clock;
  jwtSecret?: string | undefined;
  /**
   * `LAKESMITH_SECRETS_KEY` and `LAKESMITH_SECRETS_KEY_PREVIOUS`. Without a key, an embedded database
   * uses the key file beside it and a remote one refuses to start (`node-secrets-key.ts`).
   */
  secretsKey?: string | undefined;
  secretsKeyPrevious?: string | undefined;
  docsAssets?: AppDeps["docsAssets"];
  leaseTimings?: Partial<LeaseTimings>;
  /** The job kinds to run; the platform's own by default. */
  jobKinds?: AppDeps["jobKinds"];
  bootstrap?: Parameters<typeof bootstrap>[1];
  /** How often the hub looks for work that became offerable with time (retry backoff ends). */
  dispatchIntervalMs?: number;
  /**
   * How often the scheduler ticks: fires due schedules and reaps lapsed offers and leases
   * (default 15 s). 0 turns the timer off; tests then call `services.scheduler.tick()` themselves.
   */
  schedulerIntervalMs?: number;
  /** Email's way out for notifications (`node-smtp.ts`); none: email rows wait for one, saying why. */
  mailer?: Mailer | undefined;
  /**
   * How often the notification dispatcher runs (queue due reports, send the outbox; default 15 s).
   * 0 turns the timer off; tests then call `services.notifications.tick()` themselves.
   */
  notificationIntervalMs?: number;
  log?: (level: "info" | "warn", message: string, fields?: Record<string, unknown>) => void;
  /**
   * `LAKESMITH_TRUST_PROXY_HOPS`: how many reverse proxies of our own append to X-Forwarded-For in
   * front of this server. 0 (the default) ignores the header (`auth/client-address.ts`).
   */
  trustProxyHops?: number;
}

export interface NodeServer {
  url: string;
  port: number;
  services: Services;
  hub: LocalHub;
  bootstrapped: BootstrapResult;
  /** Closes agent sockets (agents reconnect to a successor), the HTTP server and the database. */
  stop(): Promise<void>;
}

export async function startNodeServer(options: NodeServerOptions): Promise<NodeServer> {
  const secrets = await nodeKeyring({
    dbUrl: options.dbUrl,
    key: options.secretsKey,
    previous: options.secretsKeyPrevious,
  });
  const database = await openNodeDatabase(options.dbUrl, options.dbAuthToken);
  const { db } = database;
  let hub: LocalHub | undefined;
  const services = createServices({
    db,
    secrets,
    saml: nodeSamlEngine,
    ...(database.statements ? { statements: database.statements } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.jwtSecret ? { jwtSecret: options.jwtSecret } : {}),
    ...(options.docsAssets ? { docsAssets: options.docsAssets } : {}),
    ...(options.leaseTimings ? { leaseTimings: options.leaseTimings } : {}),
    ...(options.jobKinds ? { jobKinds: options.jobKinds } : {}),
    hub: ({ jobs, agents, clock }) => {
      hub = new LocalHub(jobs, agents, clock, {
        later: (ms, run) => setTimeout(run, ms).unref(),
        ...(options.log ? { log: options.log } : {}),
      });
      return hub;
    },
    agentGateway: () => nodeAgentGateway(hub as LocalHub),
    notifications: {
      email: options.mailer,
      log: (message) => options.log?.("warn", message),
    },
  });
  const localHub = hub as unknown as LocalHub;
  const bootstrapped = await bootstrap(services, options.bootstrap ?? {}).catch((err) => {
    database.close();
    throw err;
  });
  // A single Node process holds every agent socket: whatever the database says from before is stale.
  await services.agents.disconnectAll();

  const trustProxyHops = options.trustProxyHops ?? 0;
  const app = buildApp(services, {
    clientAddress: (c) =>
      clientFromForwarded(
        (c.env as HttpBindings).incoming.socket.remoteAddress,
        c.req.header("x-forwarded-for"),
        trustProxyHops,
      ),
  });
  const wss = new WebSocketServer({ noServer: true });
  const server = serve({
    fetch: app.fetch,
    port: options.port,
    hostname: options.host ?? "127.0.0.1",
    websocket: { server: wss },
    // keepAliveAfterUnreadBodies does this clean-up without closing a keep-alive connection.
    autoCleanupIncoming: false,
  });
  keepAliveAfterUnreadBodies(server, { maxDrainBytes: 4 * MAX_BODY_BYTES });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  const port = (server.address() as AddressInfo).port;

  const dispatchTimer = setInterval(() => localHub.poke(), options.dispatchIntervalMs ?? 1000);
  dispatchTimer.unref();
  const warn = (what: string) => (err: unknown) => options.log?.("warn", what, { error: String(err) });
  const scheduler = repeat(
    options.schedulerIntervalMs ?? 15_000,
    () => services.scheduler.tick(),
    warn("scheduler tick failed"),
  );
  // The notification dispatcher runs on its own timer: a slow SMTP server never delays a tick.
  const notifier = repeat(
    options.notificationIntervalMs ?? 15_000,
    () => services.notifications.tick(),
    warn("notification round failed"),
  );

  return {
    url: `http://${options.host && options.host !== "0.0.0.0" ? options.host : "127.0.0.1"}:${port}`,
    port,
    services,
    hub: localHub,
    bootstrapped,
    async stop() {
      clearInterval(dispatchTimer);
      await scheduler.stop();
      await notifier.stop();
      await localHub.closeAll("the control plane is stopping; reconnect");
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive HTTP connections would hold close() open.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      wss.close();
      database.close();
    },
  };
}

/**
 * Runs `run` every `everyMs` (0: never), one run at a time: a slow run makes the next one wait
 * rather than pile up. `stop` ends the timer and waits for a run in flight.
 */
function repeat(everyMs: number, run: () => Promise<unknown>, onError: (err: unknown) => void) {
  let running: Promise<unknown> | undefined;
  const timer =
    everyMs > 0
      ? setInterval(() => {
          running ??= run()
            .catch(onError)
            .finally(() => {
              running = undefined;
            });
        }, everyMs)
      : undefined;
  timer?.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
