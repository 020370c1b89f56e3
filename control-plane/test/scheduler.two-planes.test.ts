/**
 * Two control planes over one database, ticking at the same moment (a Node timer beside a Cron
 * Trigger, or two replicas): every schedule slot becomes exactly one job between them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openNodeDatabase } from "../src/adapter/node-db.ts";
import { Keyring } from "../src/secrets/keyring.ts";
import { createServices, type Services } from "../src/services.ts";
import type { TestPlane } from "./harness.ts";
import { finishOnboarding } from "./support/tables.ts";

const SCHEDULES = 40;
const clock = new ManualClock(new Date("2026-04-01T00:00:00Z"));
const dir = mkdtempSync(join(tmpdir(), "lakesmith-two-planes-"));
let closers: (() => void)[] = [];
let first: Services;
let second: Services;

beforeAll(async () => {
  const url = `file:${join(dir, "shared.db")}`;
  const a = await openNodeDatabase(url);
  const b = await openNodeDatabase(url);
  closers = [() => a.client.close(), () => b.client.close()];
  const secrets = Keyring.random();
  first = createServices({ db: a.db, clock, secrets });
  second = createServices({ db: b.db, clock, secrets });
  for (let i = 0; i < SCHEDULES; i++) {
    const table = await first.tables.create(
      {
        name: `two.${i}`,
        uri: `s3://lake/two/${i}`,
        format: "delta",
        priority: "P2",
        target_file_size_mb: 512,
        parquet_v2: false,
      },
      null,
    );
    await finishOnboarding({ services: first } as TestPlane, table.id);
    await first.schedules.create(table.id, "crunch", {
      schedule_type: "daily",
      lookback_start: 2,
      lookback_end: 1,
      run_time_utc: "01:00",
      enabled: true,
    });
  }
});
afterAll(() => {
  for (const close of closers) close();
  rmSync(dir, { recursive: true, force: true });
});

const crunchJobs = async () => (await first.jobs.list({ kinds: ["crunch"] }, 0, 1000)).items;

describe("two control planes ticking at once", () => {
  it("enqueue each slot exactly once between them", async () => {
    clock.set(new Date("2026-04-01T01:00:30Z"));
    const [a, b] = await Promise.all([first.scheduler.tick(), second.scheduler.tick()]);
    expect(a.fired + b.fired).toBe(SCHEDULES);
    const jobs = await crunchJobs();
    expect(jobs).toHaveLength(SCHEDULES);
    expect(new Set(jobs.map((j) => j.dedupeKey)).size).toBe(SCHEDULES);
    expect(new Set(jobs.map((j) => j.scheduleId)).size).toBe(SCHEDULES);
  });

  it("enqueue nothing more when both tick again, and fire the next day once more", async () => {
    const again = await Promise.all([first.scheduler.tick(), second.scheduler.tick()]);
    expect(again.map((r) => r.fired)).toEqual([0, 0]);
    clock.set(new Date("2026-04-02T01:00:00Z"));
    const next = await Promise.all([second.scheduler.tick(), first.scheduler.tick()]);
    expect(next[0].fired + next[1].fired).toBe(SCHEDULES);
    expect(await crunchJobs()).toHaveLength(2 * SCHEDULES);
  });
});
