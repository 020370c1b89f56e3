/**
 * `AzureStore` against injected faults from the proxy of `support/faulty-s3.ts` in front of
 * Azurite: the fault contract every remote store passes (`support/fault-contract.ts`), and what
 * is Azure's own: deletes one request per key, answers that are not retried, staged blocks retried
 * alone or never committed, a blob replaced mid-read, and a conditional write whose answer was lost.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AzureStore, type ObjectStore, readAll } from "../src/store/index.ts";
import { AZURITE_ACCOUNT, type Azurite, startAzurite } from "./support/azurite.ts";
import { FAULT_RETRY, storeFailure as failure, storeFaultContract } from "./support/fault-contract.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";

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
  retry: Partial<typeof FAULT_RETRY> = {},
  partSize?: number,
): { store: ObjectStore; prefix: string } {
  const prefix = `faults/run-${run++}/`;
  const store = new AzureStore(AZURITE_ACCOUNT, "lake", prefix, {
    ...azurite.options,
    endpoint: `${proxy.endpoint}/${AZURITE_ACCOUNT}`,
    retry: { ...FAULT_RETRY, ...retry },
    ...(partSize ? { partSize } : {}),
  });
  return { store, prefix };
}

const busy = { kind: "status", status: 503, code: "ServerBusy" } as const;

storeFaultContract("azure:// on Azurite", {
  proxy: () => proxy,
  fresh: freshStore,
  throttle: { fault: busy, answer: "503 ServerBusy" },
  checksums: true,
});

describe("AzureStore requests", () => {
  it("deletes one request per key, through 429 and a connection reset, reporting each key once", async () => {
    const { store, prefix } = freshStore();
    for (const k of ["c/1", "c/2", "c/3"]) await store.write(k, k);
    proxy.inject({ op: "DeleteObject", key: `${prefix}c/2`, fault: { kind: "status", status: 429 } });
    proxy.inject({ op: "DeleteObject", key: `${prefix}c/2`, fault: { kind: "loseAnswer" } });
    expect(await store.deleteMany(["c/1", "c/2", "c/3", "c/never"])).toEqual({
      deleted: ["c/1", "c/2", "c/3", "c/never"],
      errors: [],
    });
    expect(proxy.count("DeleteObject", `${prefix}c/2`)).toBe(3);
    for (const k of ["c/1", "c/2", "c/3"]) expect(await store.head(k)).toBeUndefined();
  });

  it("passes a 403 on after one attempt as the service's error, and reports it per key on delete", async () => {
    const { store, prefix } = freshStore();
    const denied = { kind: "status", status: 403, code: "AuthorizationFailure" } as const;
    proxy.inject({ op: "PutObject", key: `${prefix}e`, fault: denied });
    await expect(store.write("e", "x")).rejects.toMatchObject({
      statusCode: 403,
      code: "AuthorizationFailure",
    });
    expect(proxy.count("PutObject", `${prefix}e`)).toBe(1);
    proxy.inject({ op: "DeleteObject", key: `${prefix}f`, fault: denied });
    const result = await store.deleteMany(["f"]);
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => [e.key, e.code])).toEqual([["f", "AuthorizationFailure"]]);
    expect(proxy.count("DeleteObject", `${prefix}f`)).toBe(1);
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
});

describe("AzureStore reads bodies whole or not at all", () => {
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
