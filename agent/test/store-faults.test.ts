/**
 * `S3Store` against injected object-store faults (see `support/faulty-s3.ts`): the fault contract
 * every remote store passes (`support/fault-contract.ts`), and what is S3's own: multipart parts
 * retried alone, the whole-object CRC32 over a mix of two versions, DeleteObjects batches, and a
 * conditional write whose answer was lost. Attempts are counted on the wire, never timed.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.ts";
import { storeOptions } from "../src/handlers/tables.ts";
import { type ObjectStore, readAll, type S3StoreOptions, storeFor } from "../src/store/index.ts";
import { type ConditionalS3Server, startConditionalS3Server } from "./support/conditional-s3-server.ts";
import {
  storeFailure as failure,
  FAULT_RETRY as RETRY,
  storeFaultContract,
} from "./support/fault-contract.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";

let s3: FaultyS3;
let run = 0;

beforeAll(async () => {
  s3 = await startFaultyS3();
});
afterEach(() => s3.clear());
afterAll(() => s3?.close());

/** A store on a fresh prefix, through the proxy. */
function freshStore(retry: Partial<typeof RETRY> = {}): { store: ObjectStore; prefix: string } {
  const prefix = `faults/run-${run++}/`;
  return {
    store: storeFor(`s3://lake/${prefix}`, { s3: { ...s3.options, retry: { ...RETRY, ...retry } } }),
    prefix,
  };
}

storeFaultContract("s3:// on s3rver", {
  proxy: () => s3,
  fresh: freshStore,
  throttle: { fault: { kind: "slowDown" }, answer: "503 SlowDown (Please reduce your request rate.)" },
  checksums: true,
});

describe("S3Store multipart uploads", () => {
  it("retries a failed multipart part alone and completes the upload", async () => {
    const { prefix } = freshStore();
    const store = storeFor(`s3://lake/${prefix}`, {
      s3: { ...s3.options, retry: RETRY, partSize: 5 * 1024 * 1024 },
    });
    const data = randomBytes(5 * 1024 * 1024 + 1000);
    s3.inject({ op: "UploadPart", key: `${prefix}big.bin`, fault: { kind: "status", status: 500 } });
    await store.write(
      "big.bin",
      (async function* () {
        yield data;
      })(),
    );
    const parts = s3.requests.filter((r) => r.op === "UploadPart" && r.key === `${prefix}big.bin`);
    expect(parts.filter((r) => r.fault === "status")).toHaveLength(1);
    expect(parts.filter((r) => r.fault === null).length).toBeGreaterThanOrEqual(2);
    expect(s3.count("AbortMultipartUpload", `${prefix}big.bin`)).toBe(0);
    expect((await readAll(await store.read("big.bin"))).equals(data)).toBe(true);
  });
});

describe("S3Store reads bodies whole or not at all", () => {
  it("never passes off a read whose object was replaced before it resumed as whole", async () => {
    // s3rver ignores the resume's If-Match (S3 would answer 412: `changed`), so the mix of two
    // versions reaches the end of the read, where the whole-object CRC32 refuses it.
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    await store.write("moving.bin", randomBytes(100_000));
    s3.inject({ op: "GetObject", key: `${prefix}moving.bin`, fault: { kind: "stall", afterBytes: 4096 } });
    const chunks = (await store.read("moving.bin"))[Symbol.asyncIterator]();
    expect((await chunks.next()).done).toBe(false);
    await store.write("moving.bin", randomBytes(100_000));
    const err = await failure(
      (async () => {
        while (!(await chunks.next()).done);
      })(),
    );
    expect(err.code).toBe("corrupt");
    expect(err.message).toBe(
      `GET s3://lake/${prefix}moving.bin: the bytes read do not match the object's CRC32 checksum`,
    );
  });

  it("reads an object whole again after one corrupted answer", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(20_000);
    await store.write("flip-once.bin", data);
    s3.inject({ op: "GetObject", key: `${prefix}flip-once.bin`, fault: { kind: "corrupt", atByte: 5 } });
    expect((await readAll(await store.read("flip-once.bin"))).equals(data)).toBe(true);
    expect(s3.count("GetObject", `${prefix}flip-once.bin`)).toBe(2);
  });
});

describe("S3Store deletes", () => {
  it("counts each key once when the first DeleteObjects landed but its answer was lost", async () => {
    const { store, prefix } = freshStore();
    for (const k of ["x/1", "x/2", "x/3"]) await store.write(k, k);
    s3.inject({ op: "DeleteObjects", key: `${prefix}x/1`, fault: { kind: "loseAnswer" } });
    const result = await store.deleteMany(["x/1", "x/2", "x/3"]);
    expect(result).toEqual({ deleted: ["x/1", "x/2", "x/3"], errors: [] });
    expect(s3.count("DeleteObjects")).toBeGreaterThanOrEqual(2);
    for (const k of ["x/1", "x/2", "x/3"]) expect(await store.head(k)).toBeUndefined();
  });

  it("reports every key of a batch the store kept refusing, and deletes none", async () => {
    const { store, prefix } = freshStore();
    for (const k of ["y/1", "y/2"]) await store.write(k, k);
    s3.inject({
      op: "DeleteObjects",
      key: `${prefix}y/1`,
      times: Infinity,
      fault: { kind: "status", status: 500 },
    });
    const result = await store.deleteMany(["y/1", "y/2"]);
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => [e.key, e.code])).toEqual([
      ["y/1", "unavailable"],
      ["y/2", "unavailable"],
    ]);
    expect(result.errors[0]?.message).toMatch(/failed after 3 attempts: 500 InternalError/);
    expect((await store.head("y/1"))?.size).toBe(3);
  });
});

describe("S3Store.writeIfAbsent when an attempt's answer is lost", () => {
  let dir: string;
  let stand: ConditionalS3Server;
  let proxy: FaultyS3;
  let options: S3StoreOptions;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "store-faults-conditional-"));
    stand = await startConditionalS3Server(dir);
    const credentials = { accessKeyId: "stand-in", secretAccessKey: "stand-in" };
    proxy = await startFaultyS3({
      upstream: { endpoint: stand.endpoint, options: { region: "us-east-1", credentials } },
    });
    options = { ...proxy.options, retry: RETRY };
  });
  afterAll(async () => {
    await proxy?.close();
    await stand?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("reads a 412 on the retry of its own landed write as written", async () => {
    const store = storeFor("s3://lake/t-lost/", { s3: options });
    const key = "_delta_log/00000000000000000001.json";
    proxy.inject({ op: "PutObject", key: `t-lost/${key}`, fault: { kind: "loseAnswer" } });
    expect(await store.writeIfAbsent(key, "ours")).toEqual({ written: true });
    expect(proxy.count("PutObject", `t-lost/${key}`)).toBe(2);
    expect((await readAll(await store.read(key))).toString()).toBe("ours");
  });

  it("still answers exists when the object another writer put there differs from ours", async () => {
    const store = storeFor("s3://lake/t-other/", { s3: options });
    const key = "_delta_log/00000000000000000002.json";
    expect(await store.writeIfAbsent(key, "theirs")).toEqual({ written: true });
    proxy.inject({ op: "PutObject", key: `t-other/${key}`, fault: { kind: "slowDown" } });
    expect(await store.writeIfAbsent(key, "ours!!")).toEqual({ written: false, reason: "exists" });
    expect((await readAll(await store.read(key))).toString()).toBe("theirs");
  });
});

describe("agent configuration", () => {
  it("carries the retry settings to the S3 store options", () => {
    const config = parseConfig({
      control_plane: "http://127.0.0.1:1",
      token: "t",
      s3_max_attempts: 7,
      s3_retry_base_ms: 10,
      s3_retry_max_ms: 50,
      s3_stall_timeout_ms: 1500,
    });
    expect(storeOptions(config).s3?.retry).toEqual({
      attempts: 7,
      baseMs: 10,
      maxMs: 50,
      stallTimeoutMs: 1500,
    });
    expect(() =>
      parseConfig({
        control_plane: "http://127.0.0.1:1",
        token: "t",
        s3_retry_base_ms: 100,
        s3_retry_max_ms: 10,
      }),
    ).toThrow(/must be >= s3_retry_base_ms/);
  });
});
