/**
 * `S3Store` against injected object-store faults (see `support/faulty-s3.ts`): 5xx and throttling
 * answers, connections reset before or after the server applied a request, bodies that stall or end
 * short, and corrupted bytes. Attempts are counted on the wire, never timed.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.ts";
import { storeOptions } from "../src/handlers/tables.ts";
import { type ObjectStore, readAll, type S3StoreOptions, StoreError, storeFor } from "../src/store/index.ts";
import { type ConditionalS3Server, startConditionalS3Server } from "./support/conditional-s3-server.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";

/**
 * Small budgets so exhaustion is quick: 3 attempts, millisecond backoff. The stall timeout is long
 * enough for a busy machine's slowest honest request; the stall test uses a shorter one.
 */
const RETRY = { attempts: 3, baseMs: 1, maxMs: 5, stallTimeoutMs: 2000 };

let s3: FaultyS3;
let scratch: string;
let run = 0;

beforeAll(async () => {
  s3 = await startFaultyS3();
  scratch = await mkdtemp(join(tmpdir(), "store-faults-"));
});
afterEach(() => s3.clear());
afterAll(async () => {
  await s3?.close();
  await rm(scratch, { recursive: true, force: true });
});

/** A store on a fresh prefix, through the proxy. */
function freshStore(retry: Partial<typeof RETRY> = {}): { store: ObjectStore; prefix: string } {
  const prefix = `faults/run-${run++}/`;
  return {
    store: storeFor(`s3://lake/${prefix}`, { s3: { ...s3.options, retry: { ...RETRY, ...retry } } }),
    prefix,
  };
}

/** The error a promise rejects with. */
async function failure(promise: Promise<unknown>): Promise<StoreError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  return err as StoreError;
}

describe("S3Store retries transient answers", () => {
  it("reads an object whole after two 500 InternalError answers", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(10_000);
    await store.write("a.bin", data);
    s3.inject({ op: "GetObject", key: `${prefix}a.bin`, times: 2, fault: { kind: "status", status: 500 } });
    expect((await readAll(await store.read("a.bin"))).equals(data)).toBe(true);
    expect(s3.count("GetObject", `${prefix}a.bin`)).toBe(3);
  });

  it("writes after two 503 SlowDown answers, and the object holds the bytes once", async () => {
    const { store, prefix } = freshStore();
    s3.inject({ op: "PutObject", key: `${prefix}b.json`, times: 2, fault: { kind: "slowDown" } });
    await store.write("b.json", '{"ok":true}');
    expect(s3.count("PutObject", `${prefix}b.json`)).toBe(3);
    expect((await readAll(await store.read("b.json"))).toString()).toBe('{"ok":true}');
  });

  it("lists, heads and reads through 502, 504 and connections reset before an answer", async () => {
    const { store, prefix } = freshStore();
    await store.write("c/1", "one");
    await store.write("c/2", "two");
    s3.inject({ op: "ListObjectsV2", key: `${prefix}c/`, fault: { kind: "status", status: 502 } });
    s3.inject({ op: "HeadObject", key: `${prefix}c/1`, fault: { kind: "status", status: 504 } });
    s3.inject({ op: "GetObject", key: `${prefix}c/2`, fault: { kind: "reset" } });
    const keys: string[] = [];
    for await (const o of store.list("c/")) keys.push(o.key);
    expect(keys.sort()).toEqual(["c/1", "c/2"]);
    expect((await store.head("c/1"))?.size).toBe(3);
    expect((await readAll(await store.read("c/2"))).toString()).toBe("two");
    const faults = s3.requests.filter((r) => r.key.startsWith(prefix) && r.fault !== null);
    expect(faults.map((r) => [r.op, r.fault])).toEqual([
      ["ListObjectsV2", "status"],
      ["HeadObject", "status"],
      ["GetObject", "reset"],
    ]);
  });

  it("gives up after the configured attempts with an error naming the object and the status", async () => {
    const { store, prefix } = freshStore();
    await store.write("d.parquet", "x");
    s3.inject({ op: "GetObject", key: `${prefix}d.parquet`, times: Infinity, fault: { kind: "slowDown" } });
    const err = await failure(store.read("d.parquet"));
    expect(err.code).toBe("unavailable");
    expect(err.status).toBe(503);
    expect(err.message).toBe(
      `GET s3://lake/${prefix}d.parquet failed after 3 attempts: 503 SlowDown (Please reduce your request rate.)`,
    );
    expect(s3.count("GetObject", `${prefix}d.parquet`)).toBe(3);
  });

  it("does not retry an answer that is not transient (501)", async () => {
    const { store, prefix } = freshStore();
    s3.inject({
      op: "HeadObject",
      key: `${prefix}e`,
      fault: { kind: "status", status: 501, code: "NotImplemented" },
    });
    await expect(store.head("e")).rejects.toThrow(/HEAD s3:\/\/lake\/.*\/e failed after 1 attempt: 501/);
    expect(s3.count("HeadObject", `${prefix}e`)).toBe(1);
  });

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

describe("S3Store abandons requests that stall", () => {
  it("retries a request the store never answers, once the stall timeout passes", async () => {
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    await store.write("silent.json", "{}");
    s3.inject({ op: "HeadObject", key: `${prefix}silent.json`, fault: { kind: "hang" } });
    expect((await store.head("silent.json"))?.size).toBe(2);
    expect(s3.count("HeadObject", `${prefix}silent.json`)).toBe(2);
  });
});

describe("S3Store reads bodies whole or not at all", () => {
  it("resumes a body that stalls after 4 KiB and returns every byte once", async () => {
    const { store, prefix } = freshStore({ stallTimeoutMs: 300 });
    const data = randomBytes(100_000);
    await store.write("stall.bin", data);
    s3.inject({ op: "GetObject", key: `${prefix}stall.bin`, fault: { kind: "stall", afterBytes: 4096 } });
    expect((await readAll(await store.read("stall.bin"))).equals(data)).toBe(true);
    expect(s3.count("GetObject", `${prefix}stall.bin`)).toBe(2);
  });

  it("resumes a body cut short of its Content-Length, in a range read too", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(100_000);
    await store.write("cut.bin", data);
    s3.inject({
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
    expect(s3.count("GetObject", `${prefix}cut.bin`)).toBe(4);
  });

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

  it("fails a download whose body keeps breaking and leaves no file behind", async () => {
    const { store, prefix } = freshStore();
    await store.write("broken.bin", randomBytes(50_000));
    s3.inject({
      op: "GetObject",
      key: `${prefix}broken.bin`,
      times: Infinity,
      fault: { kind: "truncate", afterBytes: 1000 },
    });
    const dir = await mkdtemp(join(scratch, "download-"));
    const err = await failure(store.download("broken.bin", join(dir, "broken.bin")));
    expect(err.code).toBe("unavailable");
    expect(err.message).toMatch(new RegExp(`^GET s3://lake/${prefix}broken.bin failed after 3 attempts`));
    expect(await readdir(dir)).toEqual([]);
  });

  it("refuses bytes that do not match the object's checksum, and leaves no file behind", async () => {
    const { store, prefix } = freshStore();
    await store.write("flip.bin", randomBytes(20_000));
    s3.inject({
      op: "GetObject",
      key: `${prefix}flip.bin`,
      times: Infinity,
      fault: { kind: "corrupt", atByte: 12_345 },
    });
    const dir = await mkdtemp(join(scratch, "download-"));
    const err = await failure(store.download("flip.bin", join(dir, "flip.bin")));
    expect(err.code).toBe("corrupt");
    expect(await readdir(dir)).toEqual([]);
  });

  it("reads an object whole again after one corrupted answer", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(20_000);
    await store.write("flip-once.bin", data);
    s3.inject({ op: "GetObject", key: `${prefix}flip-once.bin`, fault: { kind: "corrupt", atByte: 5 } });
    expect((await readAll(await store.read("flip-once.bin"))).equals(data)).toBe(true);
    expect(s3.count("GetObject", `${prefix}flip-once.bin`)).toBe(2);
  });

  it("checks the checksum across a resumed read", async () => {
    const { store, prefix } = freshStore();
    const data = randomBytes(40_000);
    await store.write("resumed.bin", data);
    s3.inject({ op: "GetObject", key: `${prefix}resumed.bin`, fault: { kind: "truncate", afterBytes: 777 } });
    expect((await readAll(await store.read("resumed.bin"))).equals(data)).toBe(true);
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
