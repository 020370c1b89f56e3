/**
 * `gs://` stores (GCS's XML API through the S3 client) on loopback servers that speak the S3 wire
 * protocol: the store contract on s3rver, write-if-absent on the stand-in acting as GCS (it
 * enforces `x-goog-if-generation-match: 0` and ignores `If-None-Match`), per-key deletes, and the
 * fault contract through the fault proxy.
 *
 * What this proves: the requests `GcsStore` sends (SigV4 with HMAC keys, path-style, the GCS
 * precondition header, one DELETE per key) and how it reads the answers GCS documents (412 for a
 * failed precondition, 404 NoSuchKey for a deleted key). What it does not: that Google's servers
 * answer exactly so; the live suite (`store-live.test.ts`) checks that against a real bucket.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.ts";
import { storeOptions } from "../src/handlers/tables.ts";
import { type GcsStoreOptions, readAll, storeFor } from "../src/store/index.ts";
import { type ConditionalS3Server, startConditionalS3Server } from "./support/conditional-s3-server.ts";
import { FAULT_RETRY as RETRY, storeFaultContract } from "./support/fault-contract.ts";
import { type FaultyS3, startFaultyS3 } from "./support/faulty-s3.ts";
import { S3RVER_CREDENTIALS } from "./support/local-s3.ts";
import { expectOneWinner, objectStoreContract } from "./support/store-contract.ts";

const HMAC = { accessId: S3RVER_CREDENTIALS.accessKeyId, secret: S3RVER_CREDENTIALS.secretAccessKey };

/** The fault proxy in front of a fresh s3rver, so requests are counted on the wire. */
let proxy: FaultyS3;
let options: GcsStoreOptions;
let run = 0;

beforeAll(async () => {
  proxy = await startFaultyS3();
  options = { endpoint: proxy.endpoint, hmac: HMAC, retry: RETRY };
});
afterEach(() => proxy.clear());
afterAll(() => proxy?.close());

objectStoreContract("gs:// on s3rver", {
  store: async () => storeFor(`gs://lake/tables/run-${run++}/`, { gcs: options }),
  // s3rver ignores preconditions; the stand-in below enforces GCS's.
  enforcesIfAbsent: false,
  listsInKeyOrder: false,
});

storeFaultContract("gs:// on s3rver", {
  proxy: () => proxy,
  fresh: (retry = {}) => {
    const prefix = `faults/run-${run++}/`;
    return {
      store: storeFor(`gs://lake/${prefix}`, { gcs: { ...options, retry: { ...RETRY, ...retry } } }),
      prefix,
    };
  },
  throttle: { fault: { kind: "slowDown" }, answer: "503 SlowDown" },
  // GETs don't ask for S3 checksums, and GCS's own are not read.
  checksums: false,
});

describe("GcsStore on s3rver", () => {
  it("names objects gs://, also when opened as gcs://", async () => {
    const store = storeFor("gcs://Lake/named/", { gcs: options });
    expect(store.uri).toBe("gs://lake/named/");
    expect(store.uriOf("a/b.json")).toBe("gs://lake/named/a/b.json");
  });

  it("deletes with one DELETE per key, retrying a throttled one, and never sends DeleteObjects", async () => {
    const prefix = `deletes-${run++}/`;
    const store = storeFor(`gs://lake/${prefix}`, { gcs: options });
    for (const k of ["a", "b", "c"]) await store.write(k, k);
    proxy.inject({
      op: "DeleteObject",
      key: `${prefix}b`,
      fault: { kind: "status", status: 429, code: "SlowDown" },
    });
    expect(await store.deleteMany(["a", "b", "c"])).toEqual({ deleted: ["a", "b", "c"], errors: [] });
    // One DELETE per key, the throttled one again (a loaded machine may retry a slow answer too).
    for (const k of ["a", "c"])
      expect(proxy.count("DeleteObject", new RegExp(`^${prefix}${k}$`))).toBeGreaterThanOrEqual(1);
    expect(proxy.count("DeleteObject", new RegExp(`^${prefix}b$`))).toBeGreaterThanOrEqual(2);
    expect(proxy.count("DeleteObjects")).toBe(0);
    for (const k of ["a", "b", "c"]) expect(await store.head(k)).toBeUndefined();
  });

  it("reports per-key failures of a batch delete instead of throwing", async () => {
    const store = storeFor("gs://no-such-bucket/t/", { gcs: options });
    const result = await store.deleteMany(["a", "b", "../c"]);
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => [e.key, e.code]).sort()).toEqual([
      ["../c", "invalid_key"],
      ["a", "NoSuchBucket"],
      ["b", "NoSuchBucket"],
    ]);
  });

  it("takes its HMAC key and endpoint from the agent's configuration, and refuses to start without a key", () => {
    const base = { control_plane: "http://127.0.0.1:1", token: "t" };
    const config = parseConfig({
      ...base,
      gcs_endpoint: proxy.endpoint,
      gcs_hmac_access_id: "GOOG1EXAMPLE",
      gcs_hmac_secret: "secret",
    });
    expect(storeOptions(config).gcs).toMatchObject({
      endpoint: proxy.endpoint,
      hmac: { accessId: "GOOG1EXAMPLE", secret: "secret" },
    });
    expect(() => storeFor("gs://lake/t/", storeOptions(parseConfig(base)))).toThrow(
      /gs:\/\/lake\/ needs an HMAC key: set LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID/,
    );
  });
});

describe("GcsStore.writeIfAbsent on a server that enforces GCS's precondition", () => {
  let dir: string;
  let stand: ConditionalS3Server;
  let gcs: GcsStoreOptions;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "store-gcs-conditional-"));
    stand = await startConditionalS3Server(dir, { gcs: true });
    gcs = { endpoint: stand.endpoint, hmac: { accessId: "stand-in", secret: "stand-in" }, retry: RETRY };
  });
  afterAll(async () => {
    await stand?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes once, then answers exists without replacing the object", async () => {
    const store = storeFor("gs://lake/t-once/", { gcs });
    const key = "_delta_log/00000000000000000000.json";
    expect(await store.writeIfAbsent(key, "first")).toEqual({ written: true });
    expect(await store.writeIfAbsent(key, "second")).toEqual({ written: false, reason: "exists" });
    expect((await readAll(await store.read(key))).toString()).toBe("first");
  });

  it("lets exactly one of 16 concurrent writers win and keeps the winner's bytes", async () => {
    await expectOneWinner(storeFor("gs://lake/t-race/", { gcs }), "_delta_log/00000000000000000003.json");
  });

  it("is not protected by S3's If-None-Match there: the GCS header is what makes it conditional", async () => {
    const s3 = storeFor("s3://lake/t-header/", {
      s3: {
        endpoint: stand.endpoint,
        forcePathStyle: true,
        region: "us-east-1",
        credentials: { accessKeyId: "x", secretAccessKey: "x" },
      },
    });
    const gs = storeFor("gs://lake/t-header/", { gcs });
    expect(await gs.writeIfAbsent("k", "gs first")).toEqual({ written: true });
    expect(await s3.writeIfAbsent("k", "s3 over it")).toEqual({ written: true });
    expect(await gs.writeIfAbsent("k", "gs again")).toEqual({ written: false, reason: "exists" });
  });

  it("counts a key GCS answers 404 NoSuchKey for as deleted", async () => {
    const store = storeFor("gs://lake/t-delete/", { gcs });
    await store.write("present", "x");
    expect(await store.deleteMany(["present", "absent"])).toEqual({
      deleted: ["present", "absent"],
      errors: [],
    });
    expect(await store.head("present")).toBeUndefined();
  });
});
