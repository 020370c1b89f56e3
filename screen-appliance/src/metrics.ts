/**
 * Prometheus metrics for `GET /metrics`. Each app gets its own registry, so tests that build
 * several apps do not collide on metric names.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { LicenseState } from "./license/license.ts";

/** `license` is read whenever the metrics are collected, for `screen_license_valid`. */
export function createMetrics(license: () => LicenseState, { defaults = false } = {}) {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  new Gauge({
    name: "screen_license_valid",
    help: "1 while the license is valid, 0 otherwise",
    registers: [registry],
    // Set when collected, so every worker process's gauge is current when the supervisor gathers
    // them (src/http/workers.ts); across workers, 1 only while every worker holds a valid one.
    aggregator: "min",
    collect() {
      this.set(license().status === "valid" ? 1 : 0);
    },
  });
  return {
    registry,
    requests: new Counter({
      name: "screen_http_requests_total",
      help: "HTTP requests by route and status code",
      labelNames: ["route", "status"] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: "screen_http_request_duration_seconds",
      help: "HTTP request latency by route",
      labelNames: ["route"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    findings: new Counter({
      name: "screen_findings_total",
      help: "Reported findings by classification type",
      labelNames: ["type"] as const,
      registers: [registry],
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
