/**
 * Prometheus metrics of one agent, on a registry of its own (several agents in one process, as in
 * tests, don't collide), and the optional `/metrics` server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";

export type ConnectionState = "disconnected" | "connecting" | "connected";
const CONNECTION_STATES: readonly ConnectionState[] = ["disconnected", "connecting", "connected"];

/** How a job ended on this agent; `released` and `aborted` jobs end elsewhere or later. */
export type JobEnding = "succeeded" | "failed" | "cancelled" | "released" | "aborted";

export class AgentMetrics {
  readonly registry = new Registry();
  readonly jobsStarted = new Counter({
    name: "lakesmith_agent_jobs_started_total",
    help: "Jobs this agent started, by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  readonly jobsFinished = new Counter({
    name: "lakesmith_agent_jobs_finished_total",
    help: "Jobs this agent stopped working on, by kind and outcome (succeeded, failed, cancelled; released when handed back while draining; aborted when the control plane refused the lease).",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  readonly offers = new Counter({
    name: "lakesmith_agent_offers_total",
    help: "Offers received, by decision (ack or reject).",
    labelNames: ["decision"] as const,
    registers: [this.registry],
  });
  readonly running = new Gauge({
    name: "lakesmith_agent_jobs_running",
    help: "Jobs running now.",
    registers: [this.registry],
  });
  readonly capacity = new Gauge({
    name: "lakesmith_agent_capacity",
    help: "Jobs this agent runs at once.",
    registers: [this.registry],
  });
  readonly connection = new Gauge({
    name: "lakesmith_agent_connection_state",
    help: "1 for the state the connection to the control plane is in, 0 for the others.",
    labelNames: ["state"] as const,
    registers: [this.registry],
  });
  readonly reconnects = new Counter({
    name: "lakesmith_agent_reconnects_total",
    help: "Connection attempts after the first.",
    registers: [this.registry],
  });

  constructor() {
    this.setConnection("disconnected");
  }

  /** Adds the process's own metrics (CPU, memory, event loop); once per process, by the CLI. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  setConnection(state: ConnectionState): void {
    for (const s of CONNECTION_STATES) this.connection.set({ state: s }, s === state ? 1 : 0);
  }

  jobEnded(kind: string, outcome: JobEnding): void {
    this.jobsFinished.inc({ kind, outcome });
  }
}

/** Serves `GET /metrics` in the Prometheus text format; resolves once listening. */
export async function serveMetrics(
  metrics: AgentMetrics,
  port: number,
  host: string,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found; metrics are at /metrics\n");
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return { server, url: `http://${shownHost}:${address.port}/metrics` };
}
