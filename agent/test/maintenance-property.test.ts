/**
 * A property of the deleting jobs together, checked on random histories of a small partitioned
 * table (a seeded PRNG, so a failing seed replays exactly): whatever mix of appends, crunches,
 * expirations, vacuums, recovers, hard deletes and stray writes runs, in whatever order,
 *
 * - no file the current snapshot references is ever deleted: every live file exists, and DuckDB
 *   reads as many rows from the live files as their `numRecords` add up to;
 * - hidden files and the log are never deleted;
 * - hard delete never fails a file the jobs proposed.
 *
 * The control plane is modelled by a list of pending deletions: every file a vacuum or an
 * expiration reports becomes one, a recover takes expired ones back (and keeps their paths out of
 * later vacuums), a hard delete consumes any. "Now" moves forward by hours between steps, so
 * tombstones age past the retention and stray files past the orphan age.
 */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ExpiredFile,
  PartitionExpirationPayloadSchema,
  VacuumPayloadSchema,
} from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, describe, expect, it } from "vitest";
import { appendCommit, writeEventsTable } from "../../test/support/delta-tables.ts";
import { runCrunch } from "../src/crunch/run.ts";
import { runPartitionExpiration } from "../src/maintenance/expire.ts";
import { runHardDelete } from "../src/maintenance/hard-delete.ts";
import { runRecover } from "../src/maintenance/recover.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import { JobError } from "../src/registry.ts";
import { FileStore } from "../src/store/index.ts";
import { commitRaw, jobContext, readdAction, readTable } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "maintenance-property-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const SEEDS = [11, 23, 37, 41, 59];
const STEPS = 40;
/** How often each step is picked: enough expirations and recovers for pending deletions to race. */
const WEIGHTS = {
  append: 2,
  crunch: 1,
  expire: 2,
  vacuum: 2,
  recover: 2,
  restore: 1,
  hardDelete: 1.5,
  stray: 1,
};
/** What the histories exercised, over all seeds: the last test checks they reached the races. */
const seen = { restored: 0, dataGone: 0, retained: 0, deleted: 0, orphans: 0 };
const HOUR = 3_600_000;
const DAYS = ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"];

/** mulberry32: a small, well-mixed 32-bit PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
    subset: <T>(items: readonly T[]): T[] => items.filter(() => next() < 0.6),
    weighted: (weights: Record<string, number>): string => {
      const total = Object.values(weights).reduce((a, b) => a + b, 0);
      let at = next() * total;
      for (const [name, weight] of Object.entries(weights)) {
        at -= weight;
        if (at < 0) return name;
      }
      return Object.keys(weights)[0] as string;
    },
  };
}

interface PendingDeletion {
  id: string;
  path: string;
  /** Expired files can be recovered with their add; vacuum records only keep their file. */
  expired?: ExpiredFile;
}

describe("deleting jobs on random histories", () => {
  for (const seed of SEEDS) {
    it(`never deletes a referenced file, and the table always reads (seed ${seed})`, async () => {
      const rand = prng(seed);
      const path = join(root, `seed-${seed}`);
      await writeEventsTable(path, { days: 3, filesPerDay: 2, rowsPerFile: 40, seed });
      const store = new FileStore(path);
      const clock = new ManualClock(new Date());
      const options = { store, memoryLimitMb: 256, clock };
      const uri = store.uri;
      const table = { table_id: "tbl_prop", uri, format: "delta" as const };
      let pending: PendingDeletion[] = [];
      const recovered = new Set<string>();
      const hidden: string[] = [];
      const history: string[] = [];
      let ids = 0;

      const steps: Record<keyof typeof WEIGHTS, () => Promise<string>> = {
        append: async () => {
          const day = rand.pick(DAYS);
          await appendCommit(path, { day, rows: 10 + rand.int(40), fileIndex: 1000 + ids++, seed });
          return `append ${day}`;
        },
        crunch: async () => {
          const kind = rand.next() < 0.7 ? "optimize" : "crunch";
          const result = await runCrunch(kind, jobContext(root, kind, table), options);
          return `${kind} v${result.committed_version}`;
        },
        expire: async () => {
          const asOf = rand.pick(DAYS.slice(2));
          const payload = PartitionExpirationPayloadSchema.parse({
            ...table,
            partition_column: "event_date",
            as_of: asOf,
            retention_days: 1 + rand.int(2),
          });
          const result = await runPartitionExpiration(
            jobContext(root, "partition_expiration", payload),
            options,
          );
          for (const file of result.files) pending.push({ id: `d${ids++}`, path: file.path, expired: file });
          return `expire <${result.cutoff_date}: ${result.files_count} files`;
        },
        vacuum: async () => {
          const payload = VacuumPayloadSchema.parse({
            ...table,
            mode: rand.pick(["lite", "full"]),
            ...(rand.next() < 0.5 ? { retention_hours: rand.pick([0, 1, 24]) } : {}),
            keep: [...recovered],
          });
          const result = await runVacuum(jobContext(root, "vacuum", payload), options);
          for (const file of result.files) pending.push({ id: `d${ids++}`, path: file.path });
          seen.orphans += result.files.filter((f) => f.reason === "orphan").length;
          return `vacuum ${payload.mode}/${result.retention_hours}h: ${result.files_count} files`;
        },
        recover: async () => {
          const chosen = rand.subset(pending.filter((p) => p.expired));
          if (chosen.length === 0) return "recover (nothing)";
          const files = chosen.map((p) => ({ ...(p.expired as ExpiredFile), deletion_id: p.id }));
          const before = (await readTable(store, root)).snapshot.version;
          try {
            const result = await runRecover(
              jobContext(root, "recover", { ...table, files, folders: [] }),
              options,
            );
            for (const p of chosen) recovered.add(p.path);
            seen.restored += result.files.filter((f) => f.outcome === "restored").length;
            pending = pending.filter((p) => !chosen.includes(p));
            return `recover ${files.length}: v${result.committed_version}`;
          } catch (err) {
            // A hard delete got there first: the job fails for good and the table is untouched.
            if (!(err instanceof JobError) || err.retryable || !err.message.includes("is gone")) throw err;
            expect((await readTable(store, root)).snapshot.version).toBe(before);
            pending = pending.filter((p) => !chosen.includes(p));
            seen.dataGone++;
            return `recover ${files.length}: data gone`;
          }
        },
        restore: async () => {
          // Another writer (a RESTORE elsewhere) adds a pending file back without telling anyone.
          const live = new Set((await readTable(store, root)).snapshot.files.map((f) => f.path));
          const candidates = pending.filter(
            (p) => p.expired && !live.has(p.path) && existsSync(join(path, p.path)),
          );
          if (candidates.length === 0) return "restore (nothing)";
          const { expired } = rand.pick(candidates);
          const file = expired as ExpiredFile;
          const version = await commitRaw(path, [
            readdAction({ ...file, partitionValues: file.partition_values, stats: file.stats }),
          ]);
          return `restore ${file.path}: v${version}`;
        },
        hardDelete: async () => {
          const chosen = rand.subset(pending);
          if (chosen.length === 0) return "hard delete (nothing)";
          const result = await runHardDelete(
            jobContext(root, "hard_delete", {
              ...table,
              files: chosen.map((p) => ({ deletion_id: p.id, path: p.path })),
            }),
            options,
          );
          expect(result.failed, JSON.stringify(result.files.filter((f) => f.outcome === "failed"))).toBe(0);
          pending = pending.filter((p) => !chosen.includes(p));
          seen.deleted += result.deleted;
          seen.retained += result.retained;
          return `hard delete ${chosen.length}: ${result.deleted} deleted, ${result.retained} retained`;
        },
        stray: async () => {
          const day = rand.pick(DAYS);
          const ageHours = rand.pick([1, 80, 200]);
          const key = rand.pick([
            `event_date=${day}/part-stray-${ids++}.c000.snappy.parquet`,
            `event_date=${day}/.part-stray-${ids++}.crc`,
            `_tmp_${ids++}/part-0.parquet`,
          ]);
          mkdirSync(join(path, key, ".."), { recursive: true });
          writeFileSync(join(path, key), "bytes no commit references");
          const at = new Date(clock.now().getTime() - ageHours * HOUR);
          utimesSync(join(path, key), at, at);
          if (key.includes("/.") || key.startsWith("_")) hidden.push(key);
          return `stray ${key} (${ageHours}h old)`;
        },
      };
      for (let step = 0; step < STEPS; step++) {
        const name = rand.weighted(WEIGHTS);
        history.push(await steps[name as keyof typeof WEIGHTS]());
        clock.advance(rand.int(72) * HOUR);

        const read = await readTable(store, root);
        const trail = history.join(" → ");
        expect(read.missing, trail).toEqual([]);
        expect(read.rows, trail).toBe(read.statsRows);
        for (const key of hidden) expect(existsSync(join(path, key)), `${key}: ${trail}`).toBe(true);
      }
    });
  }

  it("reached the races: recovers, recovers after a hard delete, retained files, deletions and orphans", () => {
    expect(seen.restored).toBeGreaterThan(0);
    expect(seen.dataGone).toBeGreaterThan(0);
    expect(seen.retained).toBeGreaterThan(0);
    expect(seen.deleted).toBeGreaterThan(0);
    expect(seen.orphans).toBeGreaterThan(0);
  });
});
