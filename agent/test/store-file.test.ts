import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileStore, storeFor } from "../src/store/index.ts";
import { objectStoreContract } from "./support/store-contract.ts";

const roots: string[] = [];
async function freshRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "store-file-"));
  roots.push(root);
  return root;
}
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

objectStoreContract("file://", {
  store: async () => storeFor(`file://${await freshRoot()}/table/`),
  enforcesIfAbsent: true,
  listsInKeyOrder: true,
});

describe("FileStore", () => {
  it("leaves no temporary files behind after writes and lost races", async () => {
    const root = await freshRoot();
    const store = new FileStore(root);
    await store.write("a/x", "1");
    await store.write("a/x", "2");
    await Promise.all(Array.from({ length: 8 }, () => store.writeIfAbsent("a/y", "3")));
    expect((await readdir(join(root, "a"))).sort()).toEqual(["x", "y"]);
  });

  it("moves a local file given up into place on the same file system, and copies one kept", async () => {
    const root = await freshRoot();
    const store = new FileStore(join(root, "t"));
    const given = join(root, "given.parquet");
    const kept = join(root, "kept.parquet");
    await writeFile(given, "given");
    await writeFile(kept, "kept");
    await store.write("p/given.parquet", { file: given, move: true });
    await store.write("p/kept.parquet", { file: kept });
    expect(await readdir(root)).toEqual(expect.not.arrayContaining(["given.parquet"]));
    expect(await readFile(kept, "utf8")).toBe("kept");
    expect((await readdir(join(root, "t", "p"))).sort()).toEqual(["given.parquet", "kept.parquet"]);
    expect(await readFile(join(root, "t", "p", "given.parquet"), "utf8")).toBe("given");
  });

  it("refuses a key that resolves outside the root, whatever its spelling", async () => {
    const root = await freshRoot();
    const store = new FileStore(join(root, "inner"));
    await writeFile(join(root, "secret"), "s");
    await expect(store.read("../secret")).rejects.toMatchObject({ code: "invalid_key" });
    await expect(store.head("x/../../secret")).rejects.toMatchObject({ code: "invalid_key" });
  });

  it("lists neither folders nor symbolic links to folders as objects", async () => {
    const root = await freshRoot();
    const store = new FileStore(join(root, "t"));
    await store.write("real/0.json", "{}");
    await symlink(join(root, "t", "real"), join(root, "t", "linked"));
    const keys: string[] = [];
    for await (const o of store.list()) keys.push(o.key);
    expect(keys).toEqual(["real/0.json"]);
    expect(await store.head("real")).toBeUndefined();
  });

  it("is what storeFor returns for a file URI or an absolute path", async () => {
    const root = await freshRoot();
    expect(storeFor(`file://${root}`).uri).toBe(`file://${root}/`);
    expect(storeFor(root)).toBeInstanceOf(FileStore);
  });
});
