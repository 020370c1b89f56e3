/**
 * `AzureStore` against injected faults from the proxy of `support/faulty-s3.ts` in front of
 * Azurite: 5xx and ServerBusy answers, resets, lost answers, silence, bodies that stall, end short
 * or arrive corrupted. Attempts are counted on the wire, never timed.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AzureStore, type ObjectStore, readAll, StoreError } from "../src/store/index.ts";
import { AZURITE_ACCOUNT, type Azurite, startAzurite } from "./support/azurite.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";

const RETRY = { attempts: 3, baseMs: 1, maxMs: 5, stallTimeoutMs: 2000 };

let azurite: Azurite;
let proxy: FaultyS3;
let run = 0;

beforeAll(async () => {
  azurite = await startAzurite();
  proxy = await startFaultyS3({ upstream: { endpoint: azurite.endpoint, options: {} }, azure: true });
}, 60_000);
afterEach(() => proxy.clear());
afterAll(async () => {
  await proxy?.close();
  await azurite?.close();
});

/** A store on a fresh prefix, through the proxy. */
function freshStore(
  retry: Partial<typeof RETRY> = {},
  partSize?: number,
): { store: ObjectStore; prefix: string } {
  const prefix = `faults/run-${run++}/`;
  const store = new AzureStore(AZURITE_ACCOUNT, "lake", prefix, {
    ...azurite.options,
    endpoint: `${proxy.endpoint}/${AZURITE_ACCOUNT}`,
    retry: { ...RETRY, ...retry },
    ...(partSize ? { partSize } : {}),
  });
  return { store, prefix };
}

async function failure(promise: Promise<unknown>): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

const busy = { kind: "status", status: 503, code: "ServerBusy" } as const;

describe("AzureStore retries transient answers", () => {
  it("writes after two 503 ServerBusy answers and reads after two 500s, each object whole", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(10_000);
    proxy.inject({ op: "PutObject", key: `${prefix}a.bin`, times: 2, fault: busy });
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

  it("lists, heads and deletes through 502, 504, 429 and connections reset before an answer", async () => {
    const { store, prefix } = freshStore();
    await store.write("c/1", "one");
    await store.write("c/2", "two");
    proxy.inject({ op: "ListObjectsV2", key: `${prefix}c/`, fault: { kind: "status", status: 502 } });
    proxy.inject({ op: "HeadObject", key: `${prefix}c/1`, fault: { kind: "status", status: 504 } });
    proxy.inject({ op: "DeleteObject", key: `${prefix}c/2`, fault: { kind: "status", status: 429 } });
    proxy.inject({ op: "DeleteObject", key: `${prefix}c/2`, fault: { kind: "reset" } });
    const keys: string[] = [];
    for await (const o of store.list("c/")) keys.push(o.key);
    expect(keys).toEqual(["c/1", "c/2"]);
    expect((await store.head("c/1"))?.size).toBe(3);
    expect(await store.deleteMany(["c/2"])).toEqual({ deleted: ["c/2"], errors: [] });
    expect(proxy.count("DeleteObject", `${prefix}c/2`)).toBe(3);
    expect(await store.head("c/2")).toBeUndefined();
  });

  it("gives up after the configured attempts with an error naming the object and the status", async () => {
    const { store, prefix } = freshStore();
    await store.write("d.parquet", "x");
    proxy.inject({ op: "GetObject", key: `${prefix}d.parquet`, times: Infinity, fault: busy });
    const err = await failure(store.read("d.parquet"));
    expect(err.code).toBe("unavailable");
    expect(err.status).toBe(503);
    expect(err.message).toMatch(
      new RegExp(
        `^GET azure://${AZURITE_ACCOUNT}/lake/${prefix}d\\.parquet failed after 3 attempts: 503 ServerBusy`,
      ),
    );
    expect(proxy.count("GetObject", `${prefix}d.parquet`)).toBe(3);
  });

  it("does not retry answers that are not transient (501, 403)", async () => {
    const { store, prefix } = freshStore();
    proxy.inject({
      op: "HeadObject",
      key: `${prefix}e`,
      fault: { kind: "status", status: 501, code: "NotImplemented" },
    });
    await expect(store.head("e")).rejects.toMatchObject({ statusCode: 501 });
    expect(proxy.count("HeadObject", `${prefix}e`)).toBe(1);
    proxy.inject({
      op: "PutObject",
      key: `${prefix}e`,
      fault: { kind: "status", status: 403, code: "AuthorizationFailure" },
    });
    await expect(store.write("e", "x")).rejects.toMatchObject({
      statusCode: 403,
      code: "AuthorizationFailure",
    });
    expect(proxy.count("PutObject", `${prefix}e`)).toBe(1);
  });

  it("retries a failed block alone and commits the blob", async () => {
    const { store, prefix } = freshStore({}, 64 * 1024);
    const data = randomBytes(3 * 64 * 1024 + 10);
    proxy.inject({ op: "UploadPart", key: `${prefix}big.bin`, times: 2, fault: busy });
    await store.write(
      "big.bin",
      (async function* () {
        yield data;
      })(),
    );
    const blocks = proxy.requests.filter((r) => r.op === "UploadPart" && r.key === `${prefix}big.bin`);
    expect(blocks).toHaveLength(4 + 2);
    expect(proxy.count("CompleteMultipartUpload", `${prefix}big.bin`)).toBe(1);
    expect((await readAll(await store.read("big.bin"))).equals(data)).toBe(true);
  });

  it("commits nothing when a block keeps failing", async () => {
    const { store, prefix } = freshStore({}, 64 * 1024);
    await store.write("kept.bin", "old");
    proxy.inject({ op: "UploadPart", key: `${prefix}kept.bin`, times: Infinity, fault: busy });
    const err = await failure(store.write("kept.bin", randomBytes(3 * 64 * 1024)));
    expect(err.code).toBe("unavailable");
    expect(proxy.count("CompleteMultipartUpload", `${prefix}kept.bin`)).toBe(0);
    expect((await readAll(await store.read("kept.bin"))).toString()).toBe("old");
  });

  it("retries a request the store never answers, once the stall timeout passes", async () => {
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    await store.write("silent.json", "{}");
    proxy.inject({ op: "HeadObject", key: `${prefix}silent.json`, fault: { kind: "hang" } });
    expect((await store.head("silent.json"))?.size).toBe(2);
    expect(proxy.count("HeadObject", `${prefix}silent.json`)).toBe(2);
  });
});

describe("AzureStore reads bodies whole or not at all", () => {
  it("resumes a body that stalls, and one cut short, in a range read too", async () => {
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    const data = randomBytes(100_000);
    await store.write("cut.bin", data);
    proxy.inject({ op: "GetObject", key: `${prefix}cut.bin`, fault: { kind: "stall", afterBytes: 4096 } });
    expect((await readAll(await store.read("cut.bin"))).equals(data)).toBe(true);
    proxy.inject({
      op: "GetObject",
      key: `${prefix}cut.bin`,
      fault: { kind: "truncate", afterBytes: 30_000 },
    });
    const range = await readAll(await store.read("cut.bin", { start: 10, end: 50_009 }));
    expect(range.equals(data.subarray(10, 50_010))).toBe(true);
    expect(proxy.count("GetObject", `${prefix}cut.bin`)).toBe(4);
  });

  it("answers changed when the blob was replaced before the read resumed", async () => {
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    await store.write("moving.bin", randomBytes(100_000));
    proxy.inject({ op: "GetObject", key: `${prefix}moving.bin`, fault: { kind: "stall", afterBytes: 4096 } });
    const chunks = (await store.read("moving.bin"))[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    await store.write("moving.bin", randomBytes(100_000));
    const err = await failure(
      (async () => {
        while (!(await chunks.next()).done);
      })(),
    );
    expect(err.code).toBe("changed");
    expect(err.status).toBe(412);
  });

  it("refuses bytes that do not match the blob's Content-MD5, and reads it whole after one bad answer", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(20_000);
    await store.write("flip.bin", data);
    proxy.inject({ op: "GetObject", key: `${prefix}flip.bin`, fault: { kind: "corrupt", atByte: 12_345 } });
    const err = await failure(readAll(await store.read("flip.bin")));
    expect(err.code).toBe("corrupt");
    expect(err.message).toContain("MD5");
    expect((await readAll(await store.read("flip.bin"))).equals(data)).toBe(true);
  });
});

describe("AzureStore.writeIfAbsent when an attempt's answer is lost", () => {
  it("reads the conflict on the retry of its own landed write as written", async () => {
    const { store, prefix } = freshStore();
    const key = "_delta_log/00000000000000000001.json";
    proxy.inject({ op: "PutObject", key: `${prefix}${key}`, fault: { kind: "loseAnswer" } });
    expect(await store.writeIfAbsent(key, "ours")).toEqual({ written: true });
    expect(proxy.count("PutObject", `${prefix}${key}`)).toBe(2);
    expect((await readAll(await store.read(key))).toString()).toBe("ours");
  });

  it("still answers exists when the blob another writer put there differs from ours", async () => {
    const { store, prefix } = freshStore();
    const key = "_delta_log/00000000000000000002.json";
    expect(await store.writeIfAbsent(key, "theirs")).toEqual({ written: true });
    proxy.inject({ op: "PutObject", key: `${prefix}${key}`, fault: busy });
    expect(await store.writeIfAbsent(key, "ours!!")).toEqual({ written: false, reason: "exists" });
    expect((await readAll(await store.read(key))).toString()).toBe("theirs");
  });
});
