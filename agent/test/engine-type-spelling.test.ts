import { describe, expect, it } from "vitest";
import { formatType, parseType } from "../src/engine/type-spelling.ts";

describe("DuckDB type spellings", () => {
  it("parses nested types and prints them back with quoted field names", () => {
    const text =
      'STRUCT(os VARCHAR, "a b" DECIMAL(38,0), "we""ird" STRUCT(x DOUBLE[])[], m MAP(VARCHAR, JSON))[]';
    const node = parseType(text);
    expect(node).toEqual({
      kind: "list",
      of: {
        kind: "struct",
        fields: [
          ["os", { kind: "scalar", name: "VARCHAR" }],
          ["a b", { kind: "scalar", name: "DECIMAL(38,0)" }],
          [
            'we"ird',
            {
              kind: "list",
              of: {
                kind: "struct",
                fields: [["x", { kind: "list", of: { kind: "scalar", name: "DOUBLE" } }]],
              },
            },
          ],
          [
            "m",
            {
              kind: "map",
              key: { kind: "scalar", name: "VARCHAR" },
              value: { kind: "scalar", name: "JSON" },
            },
          ],
        ],
      },
    });
    expect(formatType(node)).toBe(
      'STRUCT("os" VARCHAR, "a b" DECIMAL(38,0), "we""ird" STRUCT("x" DOUBLE[])[], "m" MAP(VARCHAR, JSON))[]',
    );
    expect(parseType("TIMESTAMP WITH TIME ZONE")).toEqual({
      kind: "scalar",
      name: "TIMESTAMP WITH TIME ZONE",
    });
    expect(() => parseType("STRUCT(a BIGINT")).toThrow();
  });
});
