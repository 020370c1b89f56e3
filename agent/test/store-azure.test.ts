/**
 * `azure://` stores against Azurite on loopback: the store contract (Azurite enforces
 * `If-None-Match: *` and lists in key order), block uploads, credentials, spellings, and faults
 * from a proxy in front of the emulator.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BlobSASPermissions,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../src/config.ts";
import { storeOptions } from "../src/handlers/tables.ts";
import { AzureStore, readAll, StoreError, storeFor } from "../src/store/index.ts";
import { AZURITE_ACCOUNT, AZURITE_KEY, type Azurite, startAzurite } from "./support/azurite.ts";
import { objectStoreContract } from "./support/store-contract.ts";

let azurite: Azurite;
let run = 0;
const RETRY = { attempts: 2, baseMs: 1, maxMs: 5, stallTimeoutMs: 5000 };

beforeAll(async () => {
  azurite = await startAzurite(["lake", "other"]);
}, 60_000);
afterAll(() => azurite?.close());

const fresh = (root = "tables") =>
  storeFor(`azure://${AZURITE_ACCOUNT}/lake/${root}/run-${run++}/`, {
    azure: { ...azurite.options, retry: RETRY },
  });

objectStoreContract("azure:// on Azurite", {
  store: async () => fresh(),
  enforcesIfAbsent: true,
  listsInKeyOrder: true,
});

describe("AzureStore on Azurite", () => {
  it("writes a stream above the block size as staged blocks that round-trip byte for byte", async () => {
    const prefix = `blocks-${run++}/`;
    const store = new AzureStore(AZURITE_ACCOUNT, "lake", prefix, {
      ...azurite.options,
      partSize: 64 * 1024,
      queueSize: 3,
    });
    const data = randomBytes(5 * 64 * 1024 + 777);
    const local = join(tmpdir(), `azure-blocks-${process.pid}.bin`);
    await writeFile(local, data);
    try {
      await store.write("big.parquet", { file: local });
    } finally {
      await rm(local, { force: true });
    }
    const blocks = await azurite.service
      .getContainerClient("lake")
      .getBlockBlobClient(`${prefix}big.parquet`)
      .getBlockList("committed");
    expect(blocks.committedBlocks?.map((b) => b.size)).toEqual([...Array(5).fill(64 * 1024), 777]);
    expect((await readAll(await store.read("big.parquet"))).equals(data)).toBe(true);
    expect((await store.head("big.parquet"))?.size).toBe(data.byteLength);
  });

  it("commits nothing when the source of a block upload fails after some blocks", async () => {
    const store = new AzureStore(AZURITE_ACCOUNT, "lake", `blocks-${run++}/`, {
      ...azurite.options,
      partSize: 64 * 1024,
    });
    async function* failing(): AsyncIterable<Uint8Array> {
      yield randomBytes(3 * 64 * 1024);
      throw new Error("source broke");
    }
    await expect(store.write("half.parquet", failing())).rejects.toThrow("source broke");
    expect(await store.head("half.parquet")).toBeUndefined();
  });

  it("names objects in the spelling it was opened with, and both spellings reach the same blobs", async () => {
    const root = `spelled-${run++}`;
    const abfss = storeFor(`abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/${root}`, {
      azure: azurite.options,
    });
    const azure = storeFor(`azure://${AZURITE_ACCOUNT}/lake/${root}/`, { azure: azurite.options });
    await abfss.write("x.json", "same");
    expect((await readAll(await azure.read("x.json"))).toString()).toBe("same");
    expect(abfss.uriOf("x.json")).toBe(`abfss://lake@${AZURITE_ACCOUNT}.dfs.core.windows.net/${root}/x.json`);
    expect(azure.uriOf("x.json")).toBe(`azure://${AZURITE_ACCOUNT}/lake/${root}/x.json`);
  });

  it("reaches the account with a connection string and with a SAS token from the agent's configuration", async () => {
    const base = { control_plane: "http://127.0.0.1:1", token: "t" };
    const byString = storeFor(`azure://${AZURITE_ACCOUNT}/lake/creds-${run++}/`, {
      ...storeOptions(parseConfig({ ...base, azure_connection_string: azurite.connectionString })),
    });
    await byString.write("a", "by connection string");
    const sas = generateBlobSASQueryParameters(
      {
        containerName: "lake",
        permissions: BlobSASPermissions.parse("racwd"),
        expiresOn: new Date(Date.now() + 3_600_000),
      },
      new StorageSharedKeyCredential(AZURITE_ACCOUNT, AZURITE_KEY),
    ).toString();
    const bySas = storeFor(byString.uri, {
      ...storeOptions(parseConfig({ ...base, azure_endpoint: azurite.endpoint, azure_sas_token: `?${sas}` })),
    });
    expect((await readAll(await bySas.read("a"))).toString()).toBe("by connection string");
    expect(await bySas.writeIfAbsent("b", "by SAS")).toEqual({ written: true });
    expect(await bySas.deleteMany(["a", "b"])).toEqual({ deleted: ["a", "b"], errors: [] });
  });

  it("refuses a store without a credential, or with another account's connection string, saying what to set", () => {
    expect(() => storeFor("azure://acct/lake/t/")).toThrow(/LAKESMITH_AGENT_AZURE_CONNECTION_STRING/);
    expect(() =>
      storeFor("azure://otheraccount/lake/t/", { azure: { connectionString: azurite.connectionString } }),
    ).toThrow(/connection string is for the account 'devstoreaccount1', not 'otheraccount'/);
  });

  it("reports a wrong key as the service's 403 without retrying, and a missing container per key on delete", async () => {
    const wrongKey = Buffer.from("not the key").toString("base64");
    const store = storeFor(`azure://${AZURITE_ACCOUNT}/lake/t/`, {
      azure: { endpoint: azurite.endpoint, accountKey: wrongKey, retry: RETRY },
    });
    const err = await store.write("x", "y").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).not.toBeInstanceOf(StoreError);
    expect((err as { statusCode?: number }).statusCode).toBe(403);
    const missing = storeFor(`azure://${AZURITE_ACCOUNT}/no-such-container/t/`, { azure: azurite.options });
    const result = await missing.deleteMany(["a", "b", "../c"]);
    expect(result.deleted).toEqual([]);
    expect(result.errors.map((e) => [e.key, e.code]).sort()).toEqual([
      ["../c", "invalid_key"],
      ["a", "ContainerNotFound"],
      ["b", "ContainerNotFound"],
    ]);
  });

  it("lists keys relative to the root only, not siblings sharing the prefix", async () => {
    const a = storeFor(`azure://${AZURITE_ACCOUNT}/other/siblings/t1`, { azure: azurite.options });
    const b = storeFor(`azure://${AZURITE_ACCOUNT}/other/siblings/t10/`, { azure: azurite.options });
    await a.write("x", "a");
    await b.write("x", "b");
    const keys: string[] = [];
    for await (const o of a.list()) keys.push(o.key);
    expect(keys).toEqual(["x"]);
  });

  it("lists past one page of results, in key order", async () => {
    const store = new AzureStore(AZURITE_ACCOUNT, "lake", `paged-${run++}/`, {
      ...azurite.options,
      pageSize: 7,
    });
    const many = Array.from({ length: 23 }, (_, i) => `p/${String(i).padStart(3, "0")}`);
    await Promise.all([...many].reverse().map((k) => store.write(k, k)));
    const listed: string[] = [];
    for await (const o of store.list("p/")) listed.push(o.key);
    expect(listed).toEqual(many);
  });
});
