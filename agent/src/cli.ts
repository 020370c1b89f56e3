/**
 * `lakesmith-agent`: parses the configuration (flags > environment > config file > defaults),
 * starts the agent and its optional metrics server, and drains on SIGTERM/SIGINT.
 *
 * Exit codes: 0 after a drain; 2 for a configuration it can't start with; 3 when the control plane
 * refused the agent for good (token revoked or unknown, unsupported protocol); 1 for anything else,
 * including a second signal during a drain.
 */
import { Agent } from "./agent.ts";
import type { AgentConfig } from "./config.ts";
import { ConfigError, loadCliConfig, redactedConfig, usage } from "./config.ts";
import { catalogHandlers } from "./handlers/catalogs.ts";
import { conversionHandlers } from "./handlers/conversion.ts";
import { diagnosticHandlers } from "./handlers/diagnostic.ts";
import { discoveryHandlers } from "./handlers/discovery.ts";
import { optimusHandlers } from "./handlers/optimus.ts";
import { tableHandlers } from "./handlers/tables.ts";
import { createLogger } from "./log.ts";
import { AgentMetrics, serveMetrics } from "./metrics.ts";
import { HandlerRegistry } from "./registry.ts";

/** Every kind this agent build can run. */
export function defaultRegistry(config: AgentConfig): HandlerRegistry {
  return new HandlerRegistry([
    ...diagnosticHandlers,
    ...tableHandlers(config),
    ...catalogHandlers(config),
    ...discoveryHandlers(config),
    ...conversionHandlers(config),
    ...optimusHandlers(config),
  ]);
}

async function main(): Promise<number> {
  let command: ReturnType<typeof loadCliConfig>;
  try {
    command = loadCliConfig(process.argv.slice(2), process.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`lakesmith-agent: ${err.message}\n`);
    return 2;
  }
  if (command.command === "help") {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  if (command.command === "print-config") {
    process.stdout.write(`${JSON.stringify(redactedConfig(command.config), null, 2)}\n`);
    return 0;
  }

  const { config } = command;
  const log = createLogger(config);
  const metrics = new AgentMetrics();
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  if (config.metrics_port !== undefined) {
    metrics.collectProcessMetrics();
    try {
      metricsServer = await serveMetrics(metrics, config.metrics_port, config.metrics_host);
    } catch (err) {
      log.fatal({ err: (err as Error).message, port: config.metrics_port }, "could not serve metrics");
      return 2;
    }
    log.info({ url: metricsServer.url }, "serving Prometheus metrics");
  }

  const agent = new Agent({ config, registry: defaultRegistry(config), log, metrics });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      log.info({ signal }, "draining before exit");
      void agent.drain();
    } else {
      log.warn({ signal }, "second signal: stopping without waiting for running jobs");
      void agent.stop({ code: 1, reason: `stopped by a second ${signal}` });
    }
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // Started with an IPC channel (the local agent of `npm start`): if that parent dies without
  // stopping us, drain rather than reconnect to a control plane that is gone.
  if (process.send)
    process.once("disconnect", () => {
      log.info("the process that started this agent is gone: draining");
      void agent.drain();
    });

  await agent.start();
  const exit = await agent.exited;
  metricsServer?.server.close();
  if (exit.code === 0) log.info({ reason: exit.reason }, "agent stopped");
  else log.error({ reason: exit.reason, exit_code: exit.code }, "agent exiting");
  return exit.code;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Timers of abandoned handlers must not keep a stopped agent alive.
    setTimeout(() => process.exit(code), 200).unref();
  },
  (err) => {
    process.stderr.write(`lakesmith-agent: ${err instanceof Error ? (err.stack ?? err.message) : err}\n`);
    process.exit(1);
  },
);
