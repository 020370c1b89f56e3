/**
 * The order of a synced-table list kept between syncs (`catalog-connections/list-order.ts`): built
 * once for callers that ask at once, bounded in names (least recently used go first, an order
 * over the bound is never kept), none while a sync runs.
 */
import { describe, expect, it } from "vitest";
import { ListOrders, versionOf } from "../src/catalog-connections/list-order.ts";

const names = (n: number, prefix = "t") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("ListOrders", () => {
  it("builds an order once for callers that ask at once, and keeps it", async () => {
    const orders = new ListOrders(100);
    let builds = 0;
    const build = async () => {
      builds++;
      await new Promise((r) => setTimeout(r, 5));
      return names(3);
    };
    const [a, b] = await Promise.all([orders.get("k", build), orders.get("k", build)]);
    expect(a).toEqual(["t0", "t1", "t2"]);
    expect(b).toBe(a);
    await orders.get("k", build);
    expect(builds).toBe(1);
  });

  it("drops the least recently used orders past its bound, and never keeps one over it", async () => {
    const orders = new ListOrders(10);
    const built: string[] = [];
    const get = (key: string, n: number) =>
      orders.get(key, async () => {
        built.push(key);
        return names(n, key);
      });
    await get("a", 4);
    await get("b", 4);
    await get("a", 4); // a is now the most recently used
    await get("c", 4); // 12 > 10: b goes
    await get("a", 4);
    await get("b", 4);
    expect(built).toEqual(["a", "b", "c", "b"]);
    await get("huge", 11);
    await get("huge", 11);
    expect(built.filter((k) => k === "huge")).toHaveLength(2);
  });

  it("forgets a failed build, so the next caller builds again", async () => {
    const orders = new ListOrders(10);
    await expect(orders.get("k", () => Promise.reject(new Error("database busy")))).rejects.toThrow("busy");
    expect(await orders.get("k", async () => ["x"])).toEqual(["x"]);
  });
});

describe("versionOf", () => {
  it("names the latest sync and its end, and is undefined while a sync writes", () => {
    const at = new Date("2026-07-01T00:00:00Z");
    expect(versionOf({ syncStatus: "completed", lastSyncJobId: "job_1", lastSyncedAt: at })).toBe(
      `job_1|completed|${at.getTime()}`,
    );
    expect(versionOf({ syncStatus: "failed", lastSyncJobId: "job_2", lastSyncedAt: at })).not.toBe(
      versionOf({ syncStatus: "completed", lastSyncJobId: "job_1", lastSyncedAt: at }),
    );
    expect(versionOf({ syncStatus: "running", lastSyncJobId: "job_3", lastSyncedAt: at })).toBeUndefined();
  });
});
