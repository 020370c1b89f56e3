import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ObjectStore, readAll, StoreError } from "../../src/store/index.ts";

export interface ContractTarget {
  /** A fresh, empty store for one test. */
  store(): Promise<ObjectStore>;
  /** Whether the backend enforces write-if-absent (s3rver ignores If-None-Match). */
  enforcesIfAbsent: boolean;
  /** Whether listings come in byte order of keys, as S3's do (s3rver's follow its folder walk). */
  listsInKeyOrder: boolean;
}

async function text(store: ObjectStore, key: string): Promise<string> {
  return (await readAll(await store.read(key))).toString("utf8");
}

async function keys(store: ObjectStore, prefix?: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out;
}

function byteOrder(keys: string[]): string[] {
  return [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/**
 * Races 16 writes-if-absent of different bytes on `key`: exactly one wins, the 15 others answer
 * `exists` (or `conflict`), and the object holds the winner's bytes.
 */
export async function expectOneWinner(store: ObjectStore, key: string): Promise<void> {
  const results = await Promise.all(
    Array.from({ length: 16 }, (_, i) => store.writeIfAbsent(key, `writer ${i} `.repeat(2000))),
  );
  const winners = results.flatMap((r, i) => (r.written ? [i] : []));
  expect(winners).toHaveLength(1);
  expect(results.filter((r) => !r.written).length).toBe(15);
  expect(await text(store, key)).toBe(`writer ${winners[0]} `.repeat(2000));
}

/** The behaviour every `ObjectStore` must have, run against one backend. */
export function objectStoreContract(name: string, target: ContractTarget): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let scratch: string;
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), "store-contract-"));
    });
    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    it("round-trips bytes, text, streams and local files, and reports their size", async () => {
      const store = await target.store();
      const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
      const local = join(scratch, "source.bin");
      await writeFile(local, Buffer.from("from a file"));
      await store.write("a/bytes.bin", bytes);
      await store.write("a/text.txt", "héllo");
      await store.write("a/stream.txt", Readable.from([Buffer.from("one,"), Buffer.from("two")]));
      await store.write("a/file.txt", { file: local });
      expect(Buffer.compare(await readAll(await store.read("a/bytes.bin")), Buffer.from(bytes))).toBe(0);
      expect(await text(store, "a/text.txt")).toBe("héllo");
      expect(await text(store, "a/stream.txt")).toBe("one,two");
      expect(await text(store, "a/file.txt")).toBe("from a file");
      const head = await store.head("a/text.txt");
      expect(head?.size).toBe(Buffer.byteLength("héllo"));
      expect(head?.lastModified).toBeInstanceOf(Date);
      expect(Math.abs((head?.lastModified.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    });

    it("answers undefined from head and not_found from read for an absent key", async () => {
      const store = await target.store();
      expect(await store.head("missing/key")).toBeUndefined();
      await expect(store.read("missing/key")).rejects.toMatchObject({ code: "not_found" });
      await expect(store.download("missing/key", join(scratch, "nope"))).rejects.toBeInstanceOf(StoreError);
    });

    it("replaces an object on a second write", async () => {
      const store = await target.store();
      await store.write("k", "first version, longer");
      await store.write("k", "second");
      expect(await text(store, "k")).toBe("second");
      expect((await store.head("k"))?.size).toBe(6);
    });

    it("reads a byte range", async () => {
      const store = await target.store();
      await store.write("r.txt", "0123456789");
      expect((await readAll(await store.read("r.txt", { start: 2, end: 5 }))).toString()).toBe("2345");
      expect((await readAll(await store.read("r.txt", { start: 7 }))).toString()).toBe("789");
    });

    it("downloads to a local file", async () => {
      const store = await target.store();
      await store.write("d/part-0.parquet", "parquet bytes");
      const local = join(scratch, `download-${name.replace(/\W/g, "")}.parquet`);
      const info = await store.download("d/part-0.parquet", local);
      expect(info.size).toBe(13);
      expect(await readFile(local, "utf8")).toBe("parquet bytes");
    });

    it("lists recursively in key order with sizes, filtering by string prefix", async () => {
      const store = await target.store();
      const ordered = async (prefix?: string) => {
        const listed = await keys(store, prefix);
        return target.listsInKeyOrder ? listed : byteOrder(listed);
      };
      for (const key of ["t/b/2.json", "t/a.txt", "t/a/1.json", "t/a/0.json", "t/ab", "u/x", "t/c"]) {
        await store.write(key, key);
      }
      expect(await ordered("t/")).toEqual([
        "t/a.txt",
        "t/a/0.json",
        "t/a/1.json",
        "t/ab",
        "t/b/2.json",
        "t/c",
      ]);
      expect(await ordered("t/a")).toEqual(["t/a.txt", "t/a/0.json", "t/a/1.json", "t/ab"]);
      expect(await ordered("t/a/")).toEqual(["t/a/0.json", "t/a/1.json"]);
      expect(await keys(store)).toHaveLength(7);
      expect(await keys(store, "nothing/here/")).toEqual([]);
      const sizes: Record<string, number> = {};
      for await (const o of store.list("t/b")) sizes[o.key] = o.size;
      expect(sizes).toEqual({ "t/b/2.json": "t/b/2.json".length });
    });

    it("writes if absent once, then reports the existing object without changing it", async () => {
      const store = await target.store();
      expect(await store.writeIfAbsent("_delta_log/00000000000000000000.json", "first")).toEqual({
        written: true,
      });
      if (!target.enforcesIfAbsent) return;
      expect(await store.writeIfAbsent("_delta_log/00000000000000000000.json", "second")).toEqual({
        written: false,
        reason: "exists",
      });
      expect(await text(store, "_delta_log/00000000000000000000.json")).toBe("first");
    });

    it.runIf(target.enforcesIfAbsent)(
      "lets exactly one of 16 concurrent writes-if-absent on one key win, and keeps the winner's bytes",
      async () => {
        const store = await target.store();
        const key = "_delta_log/00000000000000000007.json";
        await expectOneWinner(store, key);
        expect(await keys(store, "_delta_log/")).toEqual([key]);
      },
    );

    it("writes a local file given up with move, and one kept, and refuses a missing one", async () => {
      const store = await target.store();
      const kept = join(scratch, "kept.bin");
      const given = join(scratch, "given.bin");
      await writeFile(kept, "kept file");
      await writeFile(given, "given file");
      await store.write("f/kept.txt", { file: kept });
      await store.write("f/given.txt", { file: given, move: true });
      expect(await text(store, "f/kept.txt")).toBe("kept file");
      expect(await text(store, "f/given.txt")).toBe("given file");
      expect(await readFile(kept, "utf8")).toBe("kept file");

      if (target.enforcesIfAbsent) {
        await writeFile(given, "a second writer");
        expect(await store.writeIfAbsent("f/given.txt", { file: given, move: true })).toMatchObject({
          written: false,
        });
        expect(await text(store, "f/given.txt")).toBe("given file");
      }
      await expect(store.write("f/missing.txt", { file: join(scratch, "no-such-file") })).rejects.toThrow();
      expect((await keys(store, "f/")).sort()).toEqual(["f/given.txt", "f/kept.txt"]);
    });

    it("leaves nothing under the key when the source fails mid-write", async () => {
      const store = await target.store();
      async function* failing(): AsyncIterable<Uint8Array> {
        yield Buffer.from("partial");
        throw new Error("source broke");
      }
      await expect(store.write("broken", failing())).rejects.toThrow("source broke");
      await expect(store.writeIfAbsent("broken-once", failing())).rejects.toThrow("source broke");
      expect(await store.head("broken")).toBeUndefined();
      expect(await store.head("broken-once")).toBeUndefined();
      expect(await keys(store)).toEqual([]);
    });

    it("deletes more than one batch of keys, counting absent keys as deleted", async () => {
      const store = await target.store();
      const many = Array.from({ length: 1003 }, (_, i) => `del/${String(i).padStart(4, "0")}`);
      for (let i = 0; i < many.length; i += 50) {
        await Promise.all(many.slice(i, i + 50).map((k) => store.write(k, "x")));
      }
      await store.write("keep/me", "y");
      const result = await store.deleteMany([...many, "del/never-existed"]);
      expect(result.errors).toEqual([]);
      expect(result.deleted).toHaveLength(1004);
      expect(await keys(store)).toEqual(["keep/me"]);
    });

    it("refuses keys that are empty, absolute or have dot segments", async () => {
      const store = await target.store();
      for (const bad of ["", "/abs", "a/../../etc/passwd", "a//b", "./a", "dir/"]) {
        await expect(store.write(bad, "x"), bad).rejects.toMatchObject({ code: "invalid_key" });
      }
      await expect(keys(store, "../")).rejects.toMatchObject({ code: "invalid_key" });
    });

    it("names each key by an absolute URI under the root", async () => {
      const store = await target.store();
      expect(store.uri.endsWith("/")).toBe(true);
      expect(store.uriOf("_delta_log/0.json")).toBe(`${store.uri}_delta_log/0.json`);
    });
  });
}
