import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel } from "node:worker_threads";
import { Zstd } from "@hpcc-js/wasm-zstd";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SparkLog } from "../src/optimus/spark/files.ts";
import { Schedule } from "../src/optimus/spark/parallel.ts";
import {
  LARGE_WINDOW,
  LargeWindowLog,
  logDecoder,
  serveWindow,
  type WindowClient,
  windowClient,
} from "../src/optimus/spark/window-decoder.ts";
import { zstd, zstdWindowOf } from "../src/optimus/spark/zstd.ts";
import { FileStore, StoreError } from "../src/store/index.ts";
import { portStore, serveReads } from "../src/store/port.ts";
import { DELTA_FIXTURES } from "./support/fixtures.ts";

const SPARK = join(DELTA_FIXTURES, "../query-logs/spark");
const DATABRICKS = "nds_q88_photon_db_13_3.zstd"; // a 128 MiB window
const DATAPROC = "nds_q72_dataproc_2_2.zstd"; // an 8 MiB window

let photon: Buffer;
let dataproc: Buffer;
beforeAll(async () => {
  photon = await readFile(join(SPARK, DATABRICKS));
  dataproc = await readFile(join(SPARK, DATAPROC));
});

/** `bytes` as a stream of `size`-byte chunks. */
async function* chunks(bytes: Uint8Array, size = 64 * 1024): AsyncIterable<Uint8Array> {
  for (let i = 0; i < bytes.byteLength; i += size) yield bytes.subarray(i, i + size);
}

/** Length and SHA-256 of a stream's bytes (each chunk is used before the next is asked for). */
async function digest(stream: AsyncIterable<Uint8Array>): Promise<{ bytes: number; sha: string }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return { bytes, sha: hash.digest("hex") };
}

/** A window thread's service and a reader's client, on the two ends of one channel in this thread. */
function window(): WindowClient {
  const { port1, port2 } = new MessageChannel();
  serveWindow(port1);
  return windowClient(port2);
}

describe("zstd frame windows", () => {
  it("reads the window a decoder keeps from the frame header, as libzstd sizes it", async () => {
    const head = (bytes: Uint8Array) => zstdWindowOf(bytes.subarray(0, 18));
    expect(head(photon)).toBe(128 * 2 ** 20);
    expect(head(dataproc)).toBe(8 * 2 ** 20);
    expect(head(await readFile(join(SPARK, "eventlog_dsv1.zstd")))).toBe(491_134); // content < window
    // A one-shot frame is single-segment: its window is its content size.
    const one = (await Zstd.load()).compress(new Uint8Array(300_000).fill(7));
    expect(head(one)).toBe(300_000);
    expect(head(Buffer.from('{"Event":"SparkListenerLogStart"}'))).toBeUndefined();
    expect(head(photon.subarray(0, 5))).toBeUndefined();
  });
});

describe("the window thread's decoder", () => {
  it("decodes a Databricks log exactly as this thread's decoder does", async () => {
    const local = await digest(zstd(chunks(photon), DATABRICKS));
    expect(local.bytes).toBe(142_361_502);
    expect(await digest(window().decode(chunks(photon, 1000_003), DATABRICKS))).toEqual(local);
  });

  it("serves the next stream after one the reader stopped early, and after one that failed", async () => {
    const client = window();
    for await (const _ of client.decode(chunks(photon), "stopped")) break;
    const bad = digest(client.decode(chunks(Buffer.alloc(4096, 0x5a)), "app-bad.zstd"));
    await expect(bad).rejects.toThrow("app-bad.zstd: not a zstd stream");
    const local = await digest(zstd(chunks(dataproc), DATAPROC));
    expect(await digest(client.decode(chunks(dataproc), DATAPROC))).toEqual(local);
  });

  it("decodes one stream at a time: a second reader's stream waits for the first to end", async () => {
    const { port1: a1, port2: a2 } = new MessageChannel();
    const { port1: b1, port2: b2 } = new MessageChannel();
    serveWindow(a1);
    serveWindow(b1);
    const order: string[] = [];
    const read = async (client: WindowClient, name: string, bytes: Buffer) => {
      for await (const _ of client.decode(chunks(bytes), name)) order.push(name);
    };
    await Promise.all([
      read(windowClient(a2), "first", dataproc),
      read(windowClient(b2), "second", dataproc),
    ]);
    const firstEnds = order.lastIndexOf("first");
    expect(order.indexOf("second")).toBeGreaterThan(firstEnds);
  });
});

describe("a reader's log decoder", () => {
  it("refuses a large-window log it was not given the window thread for, before reading a line", async () => {
    const decode = logDecoder(undefined);
    await expect(digest(decode(chunks(photon), "app-1.zstd"))).rejects.toBeInstanceOf(LargeWindowLog);
    expect(LARGE_WINDOW).toBeLessThan(128 * 2 ** 20);
  });

  it("decodes small windows here and large ones in the window thread it was given", async () => {
    const used: string[] = [];
    const client = window();
    const spy: WindowClient = {
      decode: (source, name) => {
        used.push(name);
        return client.decode(source, name);
      },
    };
    const decode = logDecoder(spy);
    expect(await digest(decode(chunks(dataproc), "a.zstd"))).toEqual(await digest(zstd(chunks(dataproc))));
    expect(await digest(decode(chunks(photon), "b.zstd"))).toEqual(await digest(zstd(chunks(photon))));
    const text = Buffer.from('{"Event":"SparkListenerLogStart"}\n');
    expect(await digest(decode(chunks(text), "c"))).toEqual(await digest(chunks(text)));
    expect(used).toEqual(["b.zstd"]);
  });

  it("decodes a rolling log's later large-window part here rather than refuse it mid-log", async () => {
    const decode = logDecoder(undefined);
    await digest(decode(chunks(dataproc), "events_1_app.zstd"));
    expect(await digest(decode(chunks(photon), "events_2_app.zstd"))).toEqual(
      await digest(zstd(chunks(photon))),
    );
  });
});

describe("the pool's schedule", () => {
  const log = (key: string, size: number): SparkLog => ({
    key,
    parts: [{ key, size, lastModified: new Date(0) }],
  });

  it("hands out largest first, and large-window logs to one reader at a time", () => {
    const given: [number, string, boolean][] = [];
    let windows = 0;
    const logs = [log("small-1", 10), log("big-1", 100), log("big-2", 90), log("small-2", 5)];
    const schedule = new Schedule(
      logs,
      2,
      (reader, l, window) => given.push([reader, l.key, window]),
      () => windows++,
    );
    schedule.start();
    expect(given).toEqual([
      [0, "big-1", false],
      [1, "big-2", false],
    ]);
    schedule.finished(0, true); // big-1's window is large: given back
    expect(windows).toBe(1);
    expect(given.at(-1)).toEqual([0, "big-1", true]);
    schedule.finished(1, true); // so is big-2's: it waits for the window, reader 1 goes on
    expect(given.at(-1)).toEqual([1, "small-1", false]);
    schedule.finished(1, false);
    expect(given.at(-1)).toEqual([1, "small-2", false]);
    schedule.finished(1, false); // nothing reader 1 may take: it waits
    expect(given).toHaveLength(5);
    expect(schedule.busy).toBe(true);
    schedule.finished(0, false); // the window is free: the next large log goes to the first free reader
    expect(given.at(-1)).toEqual([0, "big-2", true]);
    schedule.finished(0, false);
    expect(schedule.busy).toBe(false);
    expect(windows).toBe(1);
  });
});

describe("reads served over a port", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "port-store-"));
    await writeFile(join(dir, "a.bin"), photon);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  function served() {
    const { port1, port2 } = new MessageChannel();
    serveReads(new FileStore(dir), port1);
    return portStore("file:///served/", port2);
  }

  it("reads whole objects and ranges as the store does, and stops a read the reader left", async () => {
    const store = served();
    const whole = await digest(await store.read("a.bin"));
    expect(whole).toEqual(await digest(chunks(photon)));
    for await (const _ of await store.read("a.bin")) break;
    expect(await digest(await store.read("a.bin", { start: 10, end: 1009 }))).toEqual(
      await digest(chunks(photon.subarray(10, 1010))),
    );
    expect(store.uriOf("x/y")).toBe("file:///served/x/y");
  });

  it("throws the store's error with its code, and refuses everything but reads", async () => {
    const store = served();
    const missing = digest(await store.read("missing.bin"));
    await expect(missing).rejects.toBeInstanceOf(StoreError);
    await expect(digest(await store.read("missing.bin"))).rejects.toMatchObject({ code: "not_found" });
    expect(() => store.head("a.bin")).toThrow(/serves reads only/);
  });
});
