import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MIN_PART_SIZE, readAll, S3Store, type S3StoreOptions, storeFor } from "../src/store/index.ts";
import { type LocalS3, startS3rver } from "./support/local-s3.ts";
import { objectStoreContract } from "./support/store-contract.ts";

let s3: LocalS3;
let options: S3StoreOptions;
let run = 0;

beforeAll(async () => {
  s3 = await startS3rver();
  options = { ...s3.options, maxAttempts: 2 };
});
afterAll(() => s3?.close());

objectStoreContract("s3:// on s3rver", {
  store: async () => storeFor(`s3://lake/tables/run-${run++}/`, { s3: options }),
  // s3rver accepts If-None-Match and ignores it; store-s3-conditional.test.ts covers enforcement.
  enforcesIfAbsent: false,
  listsInKeyOrder: false,
});

describe("S3Store on s3rver", () => {
  it("writes a stream above the part size as a multipart upload that round-trips byte for byte", async () => {
    // s3rver's multipart ETags carry no part count, so the requests on the wire show the parts.
    const client = new S3Client({ ...options, maxAttempts: 1 });
    const sent: string[] = [];
    client.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(context.commandName as string);
        return next(args);
      },
      { step: "initialize" },
    );
    const store = new S3Store("lake", `multipart-${run++}/`, { client, partSize: MIN_PART_SIZE });
    const data = randomBytes(2 * MIN_PART_SIZE + 12345);
    const local = join(tmpdir(), `multipart-source-${process.pid}.bin`);
    await writeFile(local, data);
    try {
      await store.write("big.parquet", { file: local });
    } finally {
      await rm(local, { force: true });
    }
    const head = await store.head("big.parquet");
    expect(head?.size).toBe(data.byteLength);
    expect(sent.filter((c) => c === "UploadPartCommand")).toHaveLength(3);
    expect(sent).toContain("CompleteMultipartUploadCommand");
    expect(sent).not.toContain("PutObjectCommand");
    const back = await readAll(await store.read("big.parquet"));
    expect(back.equals(data)).toBe(true);
  });

  it("lists keys relative to the root only, not siblings sharing the prefix", async () => {
    const a = storeFor("s3://lake/siblings/t1", { s3: options });
    const b = storeFor("s3://lake/siblings/t10/", { s3: options });
    await a.write("x", "a");
    await b.write("x", "b");
    const keys: string[] = [];
    for await (const o of a.list()) keys.push(o.key);
    expect(keys).toEqual(["x"]);
    expect(a.uriOf("x")).toBe("s3://lake/siblings/t1/x");
  });

  it("reports per-key failures of a batch delete instead of throwing", async () => {
    const store = storeFor("s3://no-such-bucket/t/", { s3: options });
    const result = await store.deleteMany(["a", "b", "../c"]);
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => e.key).sort()).toEqual(["../c", "a", "b"]);
    expect(result.errors.find((e) => e.key === "a")?.code).toBe("NoSuchBucket");
  });
});
