import { ManualClock } from "@lakesmith/shared";
import { describe, expect, it } from "vitest";
import type { Principal } from "./access.ts";
import { PrincipalCache } from "./principal-cache.ts";

const viewer: Principal = { kind: "user", userId: "usr_1", username: "v", role: "Viewer" };

describe("PrincipalCache", () => {
  it("forgets an entry after the TTL", () => {
    const clock = new ManualClock();
    const cache = new PrincipalCache(clock, 5_000);
    cache.set("token", viewer);
    clock.advance(4_999);
    expect(cache.get("token")).toEqual(viewer);
    clock.advance(1);
    expect(cache.get("token")).toBeUndefined();
  });

  it("never keeps an entry past the credential's own expiry", () => {
    const clock = new ManualClock();
    const cache = new PrincipalCache(clock, 5_000);
    cache.set("token", viewer, clock.now().getTime() + 1_000);
    clock.advance(1_000);
    expect(cache.get("token")).toBeUndefined();
  });

  it("drops the oldest entry when full, and everything on clear", () => {
    const cache = new PrincipalCache(new ManualClock(), 5_000, 2);
    cache.set("a", viewer);
    cache.set("b", viewer);
    cache.set("c", viewer);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.get("c")).toEqual(viewer);
    cache.clear();
    expect(cache.get("b")).toBeUndefined();
  });
});
