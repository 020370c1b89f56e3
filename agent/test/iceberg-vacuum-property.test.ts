/**
 * Vacuum on random Iceberg histories (seeded, so a failure names its seed): copies of
 * lineitem_iceberg plus 3-8 commits at random times, each replacing a random subset of the live
 * files or appending; some commits rolled back onto a branch or onto no ref at all; random tags,
 * per-ref retention settings, table properties, payload retention and mode. After a real run:
 * - the dry run planned exactly the same;
 * - no file it proposed is referenced by a snapshot that remains, and it proposed exactly the files
 *   only expired snapshots referenced (read independently, with `readSnapshotFiles`);
 * - the snapshots and refs that remain are exactly those the spec's retention rules keep, checked
 *   rule by rule rather than by re-running the planner;
 * - once every proposed file is deleted, every remaining snapshot's files still exist.
 */
import { existsSync, mkdtempSync, readdirSync, statSync, utimesSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type VacuumPayload, VacuumPayloadSchema } from "@lakesmith/shared/maintenance";
import { ManualClock } from "@lakesmith/shared/time";
import { afterAll, describe, expect, it } from "vitest";
import { type IcebergTable, loadIcebergTable, type Snapshot } from "../src/iceberg/index.ts";
import { runHardDelete } from "../src/maintenance/hard-delete.ts";
import { checksumKeyOf } from "../src/maintenance/iceberg-table.ts";
import { runVacuum } from "../src/maintenance/vacuum.ts";
import type { ObjectStore } from "../src/store/index.ts";
import { ICEBERG_FIXTURES } from "./support/iceberg.ts";
import {
  editMetadata,
  LINEITEM,
  lineitemCopy,
  referencedKeys,
  replaceFiles,
  rollBackMain,
  writeLocal,
} from "./support/iceberg-history.ts";
import { jobContext } from "./support/maintenance.ts";

const root = mkdtempSync(join(tmpdir(), "iceberg-vacuum-property-"));
afterAll(() => rm(root, { recursive: true, force: true }));

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = 1746188480005;
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
const FIXTURE_MANIFESTS = new Set(
  readdirSync(join(ICEBERG_FIXTURES, LINEITEM, "metadata"))
    .filter((n) => n.endsWith(".avro"))
    .map((n) => `metadata/${n}`),
);

/** mulberry32: a small seeded PRNG. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  return { next, int, pick };
}

interface Scenario {
  store: ObjectStore;
  dir: string;
  now: number;
  payload: VacuumPayload;
  orphans: string[];
}

async function randomHistory(seed: number): Promise<Scenario> {
  const r = prng(seed);
  const dir = join(root, `seed-${seed}`);
  const store = await lineitemCopy(dir);
  let t = T0;
  const commits = 3 + r.int(6);
  for (let i = 0; i < commits; i++) {
    t += HOUR + r.int(3 * DAY);
    const append = r.next() < 0.3;
    await replaceFiles(store, t, {
      remove: (keys) => (append ? [] : keys.filter(() => r.next() < 0.5).concat(keys.slice(0, 1))),
      add: 1 + r.int(3),
    });
    const roll = r.next();
    if (i < commits - 1 && roll < 0.15) await rollBackMain(store, `b${i}`);
    else if (i < commits - 1 && roll < 0.25) await rollBackMain(store);
  }
  const maybe = <T>(values: readonly T[]) => (r.next() < 0.5 ? undefined : r.pick(values));
  await editMetadata(store, (raw) => {
    const snapshots = raw.snapshots as Record<string, unknown>[];
    const refs = raw.refs as Record<string, Record<string, unknown>>;
    for (let k = r.int(3); k > 0; k--)
      refs[`tag${k}`] = {
        "snapshot-id": r.pick(snapshots)["snapshot-id"],
        type: "tag",
        ...optional("max-ref-age-ms", maybe([HOUR, 2 * DAY, 10 * DAY])),
      };
    for (const [name, ref] of Object.entries(refs)) {
      if (ref.type !== "branch") continue;
      Object.assign(
        ref,
        optional("min-snapshots-to-keep", maybe([1, 2, 3])),
        optional("max-snapshot-age-ms", maybe([DAY, 3 * DAY])),
        name === "main" ? {} : optional("max-ref-age-ms", maybe([DAY, 4 * DAY])),
      );
    }
    const properties = raw.properties as Record<string, string>;
    const set = (name: string, value: number | undefined) => {
      if (value !== undefined) properties[name] = String(value);
    };
    set("history.expire.min-snapshots-to-keep", maybe([1, 2]));
    set("history.expire.max-snapshot-age-ms", maybe([2 * DAY, 6 * DAY]));
    set("history.expire.max-ref-age-ms", maybe([3 * DAY, 20 * DAY]));
  });
  const now = t + r.int(6 * DAY);
  const mode = r.pick(["lite", "full"] as const);
  const orphans: string[] = [];
  if (mode === "full")
    for (let k = 0; k < 2; k++) {
      const key = `data/orphan-${seed}-${k}.bin`;
      await writeLocal(join(dir, key), "orphan");
      const at = new Date(now - 4 * DAY);
      utimesSync(join(dir, key), at, at);
      orphans.push(key);
    }
  const retention = maybe([12, 48, 200]);
  const payload = VacuumPayloadSchema.parse({
    table_id: "tbl_test",
    uri: store.uri,
    format: "iceberg",
    mode,
    ...(retention === undefined ? {} : { retention_hours: retention }),
  });
  return { store, dir, now, payload, orphans };
}

function optional(name: string, value: number | undefined): Record<string, number> {
  return value === undefined ? {} : { [name]: value };
}

const run = (s: Scenario, extra: Partial<VacuumPayload> = {}) =>
  runVacuum(jobContext(root, "vacuum", { ...s.payload, ...extra }), {
    store: s.store,
    memoryLimitMb: 256,
    clock: new ManualClock(new Date(s.now)),
  });

/** The snapshots and refs the spec's rules keep, each rule checked on its own. */
function checkRetention(before: IcebergTable, after: IcebergTable, s: Scenario): void {
  const props = before.metadata.properties;
  const number = (name: string) => (props[name] === undefined ? undefined : Number(props[name]));
  const maxAge =
    (s.payload.retention_hours ?? (number("history.expire.max-snapshot-age-ms") ?? 5 * DAY) / HOUR) * HOUR;
  const minKeep = number("history.expire.min-snapshots-to-keep") ?? 1;
  const maxRefAge = number("history.expire.max-ref-age-ms") ?? Number.POSITIVE_INFINITY;
  const byId = new Map(before.metadata.snapshots.map((x) => [x.snapshotId, x]));
  const remaining = new Set(after.metadata.snapshots.map((x) => x.snapshotId));
  const ancestry = (id: bigint) => {
    const chain: Snapshot[] = [];
    for (let x = byId.get(id); x; x = x.parentSnapshotId === null ? undefined : byId.get(x.parentSnapshotId))
      chain.push(x);
    return chain;
  };

  expect(remaining.has(before.metadata.currentSnapshotId as bigint)).toBe(true);
  expect(after.metadata.currentSnapshotId).toBe(before.metadata.currentSnapshotId);
  const justified = new Set<bigint>();
  const onHistory = new Set<bigint>();
  for (const [name, ref] of Object.entries(before.metadata.refs)) {
    const head = byId.get(ref.snapshotId) as Snapshot;
    const tooOld = s.now - head.timestampMs > (ref.maxRefAgeMs ?? maxRefAge);
    const survives = name === "main" || !tooOld;
    expect(name in after.metadata.refs, `ref ${name}`).toBe(survives);
    if (!survives) continue;
    expect(after.metadata.refs[name]?.snapshotId).toBe(ref.snapshotId);
    expect(remaining.has(ref.snapshotId), `head of ${name}`).toBe(true);
    justified.add(ref.snapshotId);
    onHistory.add(ref.snapshotId);
    if (ref.type !== "branch") continue;
    const cutoff = s.now - (ref.maxSnapshotAgeMs ?? maxAge);
    const min = ref.minSnapshotsToKeep ?? minKeep;
    ancestry(ref.snapshotId).forEach((x, i) => {
      onHistory.add(x.snapshotId);
      // Timestamps fall along the ancestry, so the kept ancestors are a prefix of it.
      const required = i < min || x.timestampMs >= cutoff;
      if (required) {
        expect(remaining.has(x.snapshotId), `ancestor ${i} of ${name}`).toBe(true);
        justified.add(x.snapshotId);
      }
    });
  }
  for (const x of before.metadata.snapshots)
    if (!onHistory.has(x.snapshotId) && x.timestampMs >= s.now - maxAge) {
      expect(remaining.has(x.snapshotId), `young unreferenced ${x.snapshotId}`).toBe(true);
      justified.add(x.snapshotId);
    }
  for (const id of remaining) expect(justified.has(id), `snapshot ${id} kept without a rule`).toBe(true);
}

describe("vacuum on random Iceberg histories", () => {
  it.each(SEEDS)(
    "seed %i: proposes exactly the files only expired snapshots referenced, and keeps what the retention rules keep",
    async (seed) => {
      const s = await randomHistory(seed);
      const before = await loadIcebergTable(s.store);
      const referencedBefore = await referencedKeys(s.store, before);

      const dry = await run(s, { dry_run: true });
      const real = await run(s);
      expect(real.files).toEqual(dry.files);
      expect(real.expired_snapshots).toEqual(dry.expired_snapshots);
      expect(real.expired_refs).toEqual(dry.expired_refs);

      const after = await loadIcebergTable(s.store);
      const remaining = new Set(after.metadata.snapshots.map((x) => x.snapshotId));
      const expired = before.metadata.snapshots.filter((x) => !remaining.has(x.snapshotId));
      expect(expired.map((x) => String(x.snapshotId)).sort()).toEqual(
        [...(real.expired_snapshots ?? [])].sort(),
      );
      expect(real.committed_version ?? null).toBe(
        expired.length > 0 || (real.expired_refs ?? []).length > 0 ? real.table_version + 1 : null,
      );
      checkRetention(before, after, s);

      const referencedAfter = await referencedKeys(s.store, after);
      const stillNeeded = new Set([...referencedAfter.values()].flatMap((keys) => [...keys]));
      for (const f of real.files)
        expect(stillNeeded.has(f.path), `${f.path} is still referenced`).toBe(false);

      const onlyExpired = new Set(
        expired
          .flatMap((x) => [...(referencedBefore.get(x.snapshotId) ?? [])])
          .filter((k) => !stillNeeded.has(k)),
      );
      if (s.payload.mode === "full")
        for (const key of [...onlyExpired])
          if (existsSync(join(s.dir, checksumKeyOf(key)))) onlyExpired.add(checksumKeyOf(key));
      const byReason = (reason: string) =>
        real.files
          .filter((f) => f.reason === reason)
          .map((f) => f.path)
          .sort();
      expect(byReason("expired_snapshot")).toEqual([...onlyExpired].sort());
      expect(byReason("orphan")).toEqual(s.orphans);
      // Sizes are the recorded ones; the fixture's own manifests were rewritten by the copy, so
      // their recorded lengths are the originals'.
      for (const f of real.files)
        if (!FIXTURE_MANIFESTS.has(f.path)) expect(f.size, f.path).toBe(statSync(join(s.dir, f.path)).size);

      const deleted = await runHardDelete(
        jobContext(root, "hard_delete", {
          table_id: "tbl_test",
          uri: s.store.uri,
          format: "iceberg" as const,
          files: real.files.map((f, i) => ({ deletion_id: `del_${i}`, path: f.path })),
        }),
        { store: s.store, memoryLimitMb: 256 },
      );
      expect(deleted).toMatchObject({ deleted: real.files_count, retained: 0, failed: 0 });
      for (const key of stillNeeded) expect(existsSync(join(s.dir, key)), key).toBe(true);
    },
  );
});
