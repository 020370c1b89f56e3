/**
 * How every remote store rides out faults, run against one store behind the fault proxy
 * (`faulty-s3.ts`): transient answers and resets retried, answers that are not transient passed on
 * after one attempt, the budget spent as `unavailable` naming the object, silent requests
 * abandoned, bodies that stall or end short resumed, and, where the store hands out a full-object
 * checksum, corrupted bytes refused. Attempts are counted on the wire, never timed.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ObjectStore, readAll, StoreError } from "../../src/store/index.ts";
import type { RetryPolicy } from "../../src/store/retry.ts";
import type { Fault, FaultyS3 } from "./faulty-s3.ts";

/** Small budgets so exhaustion is quick: 3 attempts, millisecond backoff. */
export const FAULT_RETRY: RetryPolicy = { attempts: 3, baseMs: 1, maxMs: 5, stallTimeoutMs: 2000 };

export interface FaultTarget {
  /** The proxy in front of the store's server (read once the suite's `beforeAll` ran). */
  proxy(): FaultyS3;
  /** A store on a fresh prefix through the proxy, with `FAULT_RETRY` overridden by `retry`. */
  fresh(retry?: Partial<RetryPolicy>): { store: ObjectStore; prefix: string };
  /** The store's throttling answer, and the status and code its error names (`503 SlowDown`). */
  throttle: { fault: Fault; answer: string };
  /** Whether whole reads are checked against a checksum the store hands out. */
  checksums: boolean;
}

/** The error a promise rejects with, which must be a `StoreError`. */
export async function storeFailure(promise: Promise<unknown>): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

export function storeFaultContract(name: string, target: FaultTarget): void {
  describe(`store faults: ${name}`, () => {
    let scratch: string;
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), "store-fault-contract-"));
    });
    afterAll(() => rm(scratch, { recursive: true, force: true }));

    it("reads an object whole after two 500 answers, and writes after two throttled ones", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      const data = randomBytes(10_000);
      proxy.inject({ op: "PutObject", key: `${prefix}a.bin`, times: 2, fault: target.throttle.fault });
      await store.write("a.bin", data);
      expect(proxy.count("PutObject", `${prefix}a.bin`)).toBe(3);
      proxy.inject({
        op: "GetObject",
        key: `${prefix}a.bin`,
        times: 2,
        fault: { kind: "status", status: 500 },
      });
      expect((await readAll(await store.read("a.bin"))).equals(data)).toBe(true);
      expect(proxy.count("GetObject", `${prefix}a.bin`)).toBe(3);
    });

    it("lists, heads and reads through 502, 504 and connections reset before an answer", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      await store.write("c/1", "one");
      await store.write("c/2", "two");
      proxy.inject({ op: "ListObjectsV2", key: `${prefix}c/`, fault: { kind: "status", status: 502 } });
      proxy.inject({ op: "HeadObject", key: `${prefix}c/1`, fault: { kind: "status", status: 504 } });
      proxy.inject({ op: "GetObject", key: `${prefix}c/2`, fault: { kind: "reset" } });
      const keys: string[] = [];
      for await (const o of store.list("c/")) keys.push(o.key);
      expect(keys.sort()).toEqual(["c/1", "c/2"]);
      expect((await store.head("c/1"))?.size).toBe(3);
      expect((await readAll(await store.read("c/2"))).toString()).toBe("two");
      const faults = proxy.requests.filter((r) => r.key.startsWith(prefix) && r.fault !== null);
      expect(faults.map((r) => [r.op, r.fault])).toEqual([
        ["ListObjectsV2", "status"],
        ["HeadObject", "status"],
        ["GetObject", "reset"],
      ]);
    });

    it("gives up after the configured attempts with an error naming the object and the status", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      await store.write("d.parquet", "x");
      proxy.inject({
        op: "GetObject",
        key: `${prefix}d.parquet`,
        times: Infinity,
        fault: target.throttle.fault,
      });
      const err = await storeFailure(store.read("d.parquet"));
      expect(err.code).toBe("unavailable");
      expect(err.status).toBe(503);
      const expected = `GET ${store.uriOf("d.parquet")} failed after 3 attempts: ${target.throttle.answer}`;
      expect(err.message).toMatch(new RegExp(`^${escaped(expected)}`));
      expect(proxy.count("GetObject", `${prefix}d.parquet`)).toBe(3);
    });

    it("does not retry an answer that is not transient (501)", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      proxy.inject({
        op: "HeadObject",
        key: `${prefix}e`,
        fault: { kind: "status", status: 501, code: "NotImplemented" },
      });
      const err = await storeFailure(store.head("e"));
      expect(err.message).toMatch(
        new RegExp(`^HEAD ${escaped(store.uriOf("e"))} failed after 1 attempt: 501`),
      );
      expect(proxy.count("HeadObject", `${prefix}e`)).toBe(1);
    });

    it("retries a request the store never answers, once the stall timeout passes", async () => {
      const { store, prefix } = target.fresh({ stallTimeoutMs: 300 });
      const proxy = target.proxy();
      await store.write("silent.json", "{}");
      proxy.inject({ op: "HeadObject", key: `${prefix}silent.json`, fault: { kind: "hang" } });
      expect((await store.head("silent.json"))?.size).toBe(2);
      expect(proxy.count("HeadObject", `${prefix}silent.json`)).toBe(2);
    });

    it("resumes a body that stalls after 4 KiB and returns every byte once", async () => {
      const { store, prefix } = target.fresh({ stallTimeoutMs: 300 });
      const proxy = target.proxy();
      const data = randomBytes(100_000);
      await store.write("stall.bin", data);
      proxy.inject({
        op: "GetObject",
        key: `${prefix}stall.bin`,
        fault: { kind: "stall", afterBytes: 4096 },
      });
      expect((await readAll(await store.read("stall.bin"))).equals(data)).toBe(true);
      expect(proxy.count("GetObject", `${prefix}stall.bin`)).toBe(2);
    });

    it("resumes a body cut short of its Content-Length, in a range read too", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      const data = randomBytes(100_000);
      await store.write("cut.bin", data);
      proxy.inject({
        op: "GetObject",
        key: `${prefix}cut.bin`,
        times: 2,
        fault: { kind: "truncate", afterBytes: 30_000 },
      });
      expect((await readAll(await store.read("cut.bin"))).equals(data)).toBe(true);
      expect(
        (await readAll(await store.read("cut.bin", { start: 10, end: 50_009 }))).equals(
          data.subarray(10, 50_010),
        ),
      ).toBe(true);
      expect(proxy.count("GetObject", `${prefix}cut.bin`)).toBe(4);
    });

    it("fails a download whose body keeps breaking and leaves no file behind", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      await store.write("broken.bin", randomBytes(50_000));
      proxy.inject({
        op: "GetObject",
        key: `${prefix}broken.bin`,
        times: Infinity,
        fault: { kind: "truncate", afterBytes: 1000 },
      });
      const dir = await mkdtemp(join(scratch, "download-"));
      const err = await storeFailure(store.download("broken.bin", join(dir, "broken.bin")));
      expect(err.code).toBe("unavailable");
      expect(err.message).toMatch(
        new RegExp(`^GET ${escaped(store.uriOf("broken.bin"))} failed after 3 attempts`),
      );
      expect(await readdir(dir)).toEqual([]);
    });

    it.runIf(target.checksums)(
      "refuses bytes that do not match the object's checksum, and leaves no file behind",
      async () => {
        const { store, prefix } = target.fresh();
        const proxy = target.proxy();
        await store.write("flip.bin", randomBytes(20_000));
        proxy.inject({
          op: "GetObject",
          key: `${prefix}flip.bin`,
          times: Infinity,
          fault: { kind: "corrupt", atByte: 12_345 },
        });
        const dir = await mkdtemp(join(scratch, "download-"));
        const err = await storeFailure(store.download("flip.bin", join(dir, "flip.bin")));
        expect(err.code).toBe("corrupt");
        expect(await readdir(dir)).toEqual([]);
      },
    );

    it("checks the checksum, where there is one, across a resumed read", async () => {
      const { store, prefix } = target.fresh();
      const proxy = target.proxy();
      const data = randomBytes(40_000);
      await store.write("resumed.bin", data);
      proxy.inject({
        op: "GetObject",
        key: `${prefix}resumed.bin`,
        fault: { kind: "truncate", afterBytes: 777 },
      });
      expect((await readAll(await store.read("resumed.bin"))).equals(data)).toBe(true);
    });
  });
}
