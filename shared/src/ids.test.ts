import { describe, expect, it } from "vitest";
import { fromBase64Url, newId, randomSecret, toBase64Url } from "./ids.ts";

describe("ids", () => {
  it("prefixes ids and makes them unique", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId("usr")));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^usr_[0-9a-hjkmnp-tv-z]{20}$/);
  });

  it("round-trips bytes through base64url without padding", () => {
    const bytes = crypto.getRandomValues(new Uint8Array(33));
    const text = toBase64Url(bytes);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(fromBase64Url(text)).toEqual(bytes);
    expect(randomSecret(32)).toHaveLength(43);
  });
});
