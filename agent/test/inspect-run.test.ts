/**
 * The onboarding inspection as the runner runs it and the control plane receives its outcome:
 * failures no later attempt can fix (no Delta log at the URI) are reported as not retryable, with
 * the reason, so the table fails at once instead of after every attempt.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobOffer } from "@lakesmith/shared/protocol";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { AllowList } from "../src/allow.ts";
import { tableHandlers } from "../src/handlers/tables.ts";
import { HandlerRegistry } from "../src/registry.ts";
import { runJob } from "../src/runner.ts";
import { copyFixture } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "inspect-run-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const registry = new HandlerRegistry(tableHandlers({ s3_force_path_style: false, memory_limit_mb: 256 }));

function onboard(uri: string) {
  const offer: JobOffer = {
    id: "job_onboarding",
    kind: "onboarding",
    fence: 1,
    attempt: 0,
    priority: "P2",
    table_id: "t",
    payload: { table_id: "t", uri, format: "delta" },
  };
  return runJob(offer, {
    registry,
    allow: new AllowList([`file://${root}`]),
    scratchRoot: mkdtempSync(join(root, "scratch-")),
    log: pino({ level: "silent" }),
    signal: new AbortController().signal,
    progress: () => {},
  });
}

describe("onboarding a location", () => {
  it("fails for good, saying why, when the folder has no Delta log", async () => {
    const folder = join(root, "parquet-only");
    mkdirSync(join(folder, "event_date=2026-01-01"), { recursive: true });
    writeFileSync(join(folder, "event_date=2026-01-01", "part-0.parquet"), "not read");
    const outcome = await onboard(`file://${folder}`);
    expect(outcome).toMatchObject({ outcome: "failed", retryable: false });
    const error = outcome.outcome === "failed" ? outcome.error : "";
    expect(error).toContain(`file://${folder} is not a Delta table`);
    expect(error).toContain("_delta_log/");
  });

  it("fails for good when the folder does not exist at all", async () => {
    const outcome = await onboard(`file://${join(root, "no-such-folder")}`);
    expect(outcome).toMatchObject({ outcome: "failed", retryable: false });
  });

  it("reports the recipe of a Delta table", async () => {
    const outcome = await onboard(`file://${copyFixture("simple_table", root)}`);
    expect(outcome.outcome).toBe("succeeded");
  });
});
