import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobOffer } from "@lakesmith/shared/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AllowList } from "../src/allow.ts";
import { Backoff } from "../src/backoff.ts";
import { noopHandler, sleepHandler } from "../src/handlers/diagnostic.ts";
import { defineHandler, HandlerRegistry } from "../src/registry.ts";
import { type RunDeps, runJob } from "../src/runner.ts";

const log = pino({ level: "silent" });

function offer(kind: string, payload: Record<string, unknown>): JobOffer {
  return { id: "job_1", kind, fence: 1, attempt: 0, priority: "P2", table_id: null, payload };
}

function deps(registry: HandlerRegistry, overrides: Partial<RunDeps> = {}): RunDeps & { reports: unknown[] } {
  const reports: unknown[] = [];
  return {
    registry,
    allow: new AllowList(["file:///lake"]),
    scratchRoot: mkdtempSync(join(tmpdir(), "agent-scratch-")),
    log,
    signal: new AbortController().signal,
    progress: (p) => reports.push(p),
    reports,
    ...overrides,
  };
}

describe("handler registry", () => {
  it("registers each kind once and looks handlers up by kind", () => {
    const registry = new HandlerRegistry([noopHandler, sleepHandler]);
    expect(registry.get("sleep")).toBe(sleepHandler);
    expect(registry.get("crunch")).toBeUndefined();
    expect(() => registry.register(noopHandler)).toThrow("already registered");
  });

  it("announces only kinds whose required capabilities the agent has", () => {
    const s3Only = defineHandler({
      kind: "s3_probe",
      requires: ["s3"],
      payload: z.object({}),
      locations: () => [],
      run: async () => undefined,
    });
    const registry = new HandlerRegistry([noopHandler, s3Only]);
    expect(registry.runnableKinds(["file"]).kinds).toEqual(["noop"]);
    expect(registry.runnableKinds(["file"]).missing.get("s3_probe")).toEqual(["s3"]);
    expect(registry.runnableKinds(["s3"]).kinds).toEqual(["noop", "s3_probe"]);
  });
});

describe("running a job", () => {
  const registry = new HandlerRegistry([noopHandler, sleepHandler]);

  it("runs noop and sleep, sleep reporting progress", async () => {
    expect(await runJob(offer("noop", {}), deps(registry))).toEqual({
      outcome: "succeeded",
      result: { ok: true },
    });
    const d = deps(registry);
    const outcome = await runJob(offer("sleep", { ms: 60, step_ms: 10 }), d);
    expect(outcome.outcome).toBe("succeeded");
    expect(d.reports.length).toBeGreaterThanOrEqual(3);
    expect(d.reports.at(-1)).toMatchObject({ fraction: 1 });
  });

  it("stops sleep as soon as the signal fires", async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error("cancelled")), 30);
    const outcome = await runJob(
      offer("sleep", { ms: 10_000 }),
      deps(registry, { signal: controller.signal }),
    );
    expect(outcome).toEqual({ outcome: "aborted" });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("fails a job outside the allow list before its handler runs", async () => {
    let runs = 0;
    const counting = new HandlerRegistry([
      defineHandler({ ...noopHandler, run: async () => ({ runs: ++runs }) }),
    ]);
    const outcome = await runJob(offer("noop", { uri: "file:///lake2/t" }), deps(counting));
    expect(outcome).toEqual({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining(
        "refused by the agent's allow list: location 'file:///lake2/t' is outside",
      ),
    });
    // A location in a field the handler does not declare is checked all the same.
    const hidden = await runJob(offer("noop", { extra: { target_uri: "s3://other/x" } }), deps(counting));
    expect(hidden.outcome).toBe("failed");
    expect(runs).toBe(0);
    expect(await runJob(offer("noop", { uri: "file:///lake/t" }), deps(counting))).toMatchObject({
      outcome: "succeeded",
    });
    expect(runs).toBe(1);
  });

  it("fails a bad payload for good, naming the field", async () => {
    expect(await runJob(offer("sleep", { ms: -1 }), deps(registry))).toEqual({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining("invalid sleep payload: payload.ms"),
    });
  });

  it("reports a handler's failure with its retryability", async () => {
    expect(await runJob(offer("noop", { fail: true, retryable: false }), deps(registry))).toEqual({
      outcome: "failed",
      error: "noop failed, as asked",
      retryable: false,
    });
    const throwing = new HandlerRegistry([
      defineHandler({
        kind: "boom",
        payload: z.object({}),
        locations: () => [],
        run: async () => {
          throw new Error("disk full");
        },
      }),
    ]);
    expect(await runJob(offer("boom", {}), deps(throwing))).toEqual({
      outcome: "failed",
      error: "disk full",
      retryable: true,
    });
  });

  it("gives each job an empty scratch folder and removes it afterwards", async () => {
    let seen = "";
    const registry = new HandlerRegistry([
      defineHandler({
        kind: "scratch",
        payload: z.object({}),
        locations: () => [],
        run: async ({ scratchDir }) => {
          seen = scratchDir;
          return { existed: existsSync(scratchDir) };
        },
      }),
    ]);
    expect(await runJob(offer("scratch", {}), deps(registry))).toEqual({
      outcome: "succeeded",
      result: { existed: true },
    });
    expect(seen).toMatch(/job_1-1$/);
    expect(existsSync(seen)).toBe(false);
  });
});

describe("reconnect backoff", () => {
  it("doubles its bound up to the maximum, jittered in the upper half, and resets", () => {
    const low = new Backoff(100, 1000, () => 0);
    expect([low.next(), low.next(), low.next(), low.next(), low.next()]).toEqual([50, 100, 200, 400, 500]);
    low.reset();
    expect(low.next()).toBe(50);
    const high = new Backoff(100, 1000, () => 1);
    expect([high.next(), high.next(), high.next(), high.next(), high.next()]).toEqual([
      100, 200, 400, 800, 1000,
    ]);
  });
});
