import { describe, expect, it } from "vitest";
import { namespaceTree } from "./namespaces.ts";

describe("namespace tree", () => {
  it("adds the namespaces implied by deeper ones and orders parents before children, level by level", () => {
    const tree = namespaceTree([
      { schema: "a-c", tables: 1 },
      { schema: "a.b.c", tables: 2 },
      { schema: "a", tables: 3 },
    ]);
    expect(tree.map((n) => [n.namespace, n.children_count, n.tables_count, n.total_tables_count])).toEqual([
      ["a", 1, 3, 5],
      ["a.b", 1, 0, 2],
      ["a.b.c", 0, 2, 2],
      ["a-c", 0, 1, 1],
    ]);
  });
});
