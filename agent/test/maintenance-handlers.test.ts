/**
 * The four deleting kinds as the agent announces and runs them: registered among the table
 * handlers, their payloads parsed and their table checked against the allow list by the runner
 * before any handler code runs, and their outcome reported the way the control plane receives it.
 */
import { mkdtempSync } from "node:fs";
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

const root = mkdtempSync(join(tmpdir(), "maintenance-handlers-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const registry = new HandlerRegistry(tableHandlers({ s3_force_path_style: false, memory_limit_mb: 256 }));

function run(kind: string, payload: Record<string, unknown>) {
  const offer: JobOffer = {
    id: `job_${kind}`,
    kind,
    fence: 1,
    attempt: 0,
    priority: "P2",
    table_id: "t",
    payload,
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

describe("deleting job kinds", () => {
  it("are announced with the other table kinds", () => {
    expect(registry.runnableKinds([]).kinds).toEqual([
      "crunch",
      "hard_delete",
      "onboarding",
      "opportunity_scan",
      "optimize",
      "partition_expiration",
      "recover",
      "vacuum",
    ]);
  });

  it("run through the runner: a vacuum plan, an expiration preflight, a hard delete", async () => {
    const path = copyFixture("simple_table", root);
    const table = { table_id: "t", uri: `file://${path}`, format: "delta" };
    const vacuum = await run("vacuum", { ...table, dry_run: true, schedule_id: "sch_1", slot: "2026-01-01" });
    expect(vacuum).toMatchObject({
      outcome: "succeeded",
      result: { mode: "lite", dry_run: true, files_count: 31 },
    });

    const preflight = await run("partition_expiration", { ...table, validate: true });
    expect(preflight).toMatchObject({
      outcome: "succeeded",
      result: { can_run: false, reason: expect.stringContaining("no partition column") },
    });

    const deleted = await run("hard_delete", {
      ...table,
      files: [{ deletion_id: "d1", path: "nothing.parquet" }],
    });
    expect(deleted).toMatchObject({ outcome: "succeeded", result: { files: [{ outcome: "absent" }] } });
  });

  it("fail for good on a bad payload, a table outside the allow list, or a refusal", async () => {
    const path = copyFixture("simple_table", root);
    const table = { table_id: "t", uri: `file://${path}`, format: "delta" };
    expect(await run("recover", { ...table, files: [] })).toMatchObject({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining("invalid recover payload"),
    });
    expect(await run("vacuum", { ...table, uri: "file:///elsewhere/table" })).toMatchObject({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining("allow list"),
    });
    expect(await run("partition_expiration", { ...table, partition_column: "value" })).toMatchObject({
      outcome: "failed",
      retryable: false,
      error: expect.stringContaining("'value' is not a partition column"),
    });
  });
});
