import { describe, expect, it } from "vitest";
import { licenseStateAt, verifyLicense } from "../src/license/license.ts";
import { createMetrics } from "../src/metrics.ts";
import { licenseText, post, testApp, vendor } from "./helpers.ts";

describe("GET /health and GET /metrics", () => {
  it("names the models and the execution provider in use", async () => {
    const app = await testApp();
    const health = (await (await app.request("/health")).json()) as {
      executionProvider: string;
      models: { name: string; executionProvider: string }[];
      personNameModel: { source: string; name: string; file: string };
    };
    expect(health.executionProvider).toBe("cpu");
    expect(health.models.map((m) => m.name)).toEqual(["person-ner", "bias", "toxicity"]);
    expect(health.personNameModel).toMatchObject({ source: "built-in", name: "person-ner" });
    expect(health.personNameModel.file).toMatch(/models\/person-ner\.onnx$/);
  });

  it("exposes request counts, latency and findings in Prometheus format", async () => {
    const app = await testApp();
    await post(app, "/screen", { data: "mail a@b.io" });
    const res = await app.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain('screen_http_requests_total{route="/screen",status="200"} 1');
    expect(text).toContain('screen_findings_total{type="EMAIL"} 1');
    expect(text).toContain("screen_http_request_duration_seconds_bucket");
    expect(text).toContain("screen_license_valid 1");
  });

  it("reads the license whenever the metrics are collected, with no request in between", async () => {
    // A worker process's registry is gathered by the supervisor without that worker serving
    // /health or /metrics itself, so the gauge cannot wait for a request to be set.
    const license = verifyLicense(licenseText("2030-06-30"), vendor.publicKey);
    let now = new Date("2030-06-01T00:00:00Z");
    const { registry } = createMetrics(() => licenseStateAt(license, now));
    expect(await registry.metrics()).toMatch(/^screen_license_valid 1$/m);
    now = new Date("2030-07-01T00:00:00Z");
    expect(await registry.metrics()).toMatch(/^screen_license_valid 0$/m);
  });
});
