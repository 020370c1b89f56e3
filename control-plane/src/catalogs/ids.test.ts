import { describe, expect, it } from "vitest";
import { catalogId, fullNameOf, parseCatalogId, tableId } from "./ids.ts";

describe("catalog and table ids", () => {
  it("round-trips a catalog id, also for names with colons, dots and non-ASCII letters", () => {
    for (const catalog of ["main", "a:b", "x.y", "ünï", "🦆"]) {
      const ref = { connectionId: "con_4k9x2m7q0c1v8b3n5z6t", catalog };
      const id = catalogId(ref);
      expect(id).toMatch(/^cat_[A-Za-z0-9_-]+$/);
      expect(parseCatalogId(id)).toEqual(ref);
    }
  });

  it("gives two connections' catalogs of the same name different ids", () => {
    expect(catalogId({ connectionId: "con_a", catalog: "main" })).not.toBe(
      catalogId({ connectionId: "con_b", catalog: "main" }),
    );
  });

  it("refuses what is not a catalog id", () => {
    for (const id of [
      "main",
      "cat_",
      "cat_%%%",
      "cat_bWFpbg",
      `${catalogId({ connectionId: "c", catalog: "m" })}=`,
    ])
      expect(parseCatalogId(id), id).toBeUndefined();
  });

  it("names a table by its catalog id and the rest of its full_name", () => {
    const ref = { connectionId: "con_a", catalog: "main" };
    const id = tableId(ref, "main.sales.eu.orders");
    expect(id).toBe(`${catalogId(ref)}.sales.eu.orders`);
    expect(fullNameOf(ref, id)).toBe("main.sales.eu.orders");
    expect(fullNameOf({ connectionId: "con_b", catalog: "main" }, id)).toBeUndefined();
  });
});
