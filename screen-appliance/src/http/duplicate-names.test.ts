import { describe, expect, it } from "vitest";
import { firstDuplicateName } from "./duplicate-names.ts";

describe("firstDuplicateName", () => {
  it("finds nothing in JSON whose objects name each member once", () => {
    for (const json of [
      '{"data": "a", "biasTypes": ["HATE", "HATE"]}',
      '{"a": {"b": 1}, "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}]}',
      '{"a": {}, "b": [], "c": [[], {}], "d": "{\\"d\\": 1, \\"d\\": 2}"}',
      '"text"',
      "[1, 2, 3]",
    ]) {
      expect(firstDuplicateName(json), json).toBeUndefined();
    }
  });

  it("names a repeated member by its path, with array indices", () => {
    expect(firstDuplicateName('{"data": "a", "data": "b"}')).toBe("data");
    expect(firstDuplicateName('{"t": {"k": 1, "x": {}, "k": 2}}')).toBe("t.k");
    expect(firstDuplicateName('{"m": [{"a": 1}, {}, {"a": 1, "b": [1, {"c": 2, "c": 3}]}]}')).toBe(
      "m.2.b.1.c",
    );
  });

  it("compares names after unescaping", () => {
    expect(firstDuplicateName('{"data": "a", "d\\u0061ta": "b"}')).toBe("data");
  });
});
