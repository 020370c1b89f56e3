import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll, type S3StoreOptions, storeFor } from "../src/store/index.ts";
import { type ConditionalS3Server, startConditionalS3Server } from "./support/conditional-s3-server.ts";

// Against the stand-in that enforces If-None-Match (see its header for why s3rver can't be used).
let server: ConditionalS3Server;
let dir: string;
let options: S3StoreOptions;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "store-conditional-"));
  server = await startConditionalS3Server(dir);
  options = {
    endpoint: server.endpoint,
    forcePathStyle: true,
    region: "us-east-1",
    credentials: { accessKeyId: "stand-in", secretAccessKey: "stand-in" },
    maxAttempts: 1,
  };
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("S3Store.writeIfAbsent on a server that enforces If-None-Match", () => {
  it("writes once, then answers exists without replacing the object", async () => {
    const store = storeFor("s3://lake/t-once/", { s3: options });
    expect(await store.writeIfAbsent("_delta_log/00000000000000000000.json", "first")).toEqual({
      written: true,
    });
    expect(await store.writeIfAbsent("_delta_log/00000000000000000000.json", "second")).toEqual({
      written: false,
      reason: "exists",
    });
    const body = await readAll(await store.read("_delta_log/00000000000000000000.json"));
    expect(body.toString()).toBe("first");
  });

  it("lets exactly one of 16 concurrent writers win and keeps the winner's bytes", async () => {
    const store = storeFor("s3://lake/t-race/", { s3: options });
    const key = "_delta_log/00000000000000000003.json";
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => store.writeIfAbsent(key, `writer ${i} `.repeat(5000))),
    );
    const winners = results.flatMap((r, i) => (r.written ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.written && r.reason === "exists")).toHaveLength(15);
    const body = await readAll(await store.read(key));
    expect(body.toString()).toBe(`writer ${winners[0]} `.repeat(5000));
  });

  it("reads 409 ConditionalRequestConflict as a conflict outcome and writes nothing", async () => {
    const store = storeFor("s3://lake/t-conflict/", { s3: options });
    server.conflictNext.add("lake/t-conflict/_delta_log/00000000000000000001.json");
    expect(await store.writeIfAbsent("_delta_log/00000000000000000001.json", "mine")).toEqual({
      written: false,
      reason: "conflict",
    });
    expect(await store.head("_delta_log/00000000000000000001.json")).toBeUndefined();
  });

  it("still throws errors that are not conditional outcomes", async () => {
    const store = storeFor("s3://lake/t-error/", { s3: options });
    await expect(store.writeIfAbsent("x", "y")).resolves.toEqual({ written: true });
    const broken = storeFor("s3://lake/t-error/", { s3: { ...options, endpoint: "http://127.0.0.1:9" } });
    await expect(broken.writeIfAbsent("z", "y")).rejects.toThrow();
  });
});
