/**
 * Every value of a row as its JSON spelling, in SQL: the yardstick of the sampled conversion's
 * lossless check (`sampled.ts`). The same row spelled from the input (each value read as the JSON
 * DuckDB parsed) and from the written Parquet (each typed value through `to_json`) hash the same
 * exactly when no value was cast: a number read into a VARCHAR column spells `"5"`, not `5`; a
 * fraction rounded into a BIGINT spells `2`, not `1.5`; text read as a number loses its quotes.
 *
 * Rules:
 * - Both sides keep the type's shape (structs, lists) with a VARCHAR at every leaf, so a value can
 *   only match the value at the same place. Maps are not spelled (`spellable` is false): their
 *   keys are data, and a conversion with one takes the every-record path.
 * - A DOUBLE leaf's input spelling is the number as a double would spell it (`100` and `100.0`
 *   are the same double), except an integer a double does not hold exactly, which keeps its own
 *   spelling and so never matches: the every-record path retypes it.
 * - Both sides are spelled by yyjson (DuckDB's JSON reader and `to_json`), so a double, an
 *   escaped string and a nested JSON value print the same on both.
 */
import { sqlString } from "../engine/duckdb.ts";
import type { TypeNode } from "../engine/type-spelling.ts";
import { inexactInteger } from "./schema.ts";

/** Whether every leaf of the type can be spelled (no map at any depth). */
export function spellable(node: TypeNode): boolean {
  switch (node.kind) {
    case "scalar":
      return true;
    case "list":
      return spellable(node.of);
    case "struct":
      return node.fields.every(([, f]) => spellable(f));
    case "map":
      return false;
  }
}

/** The value `expr` of type `node`, read from the input with every leaf as `JSON`, spelled. */
export function inputSpelling(expr: string, node: TypeNode): string {
  return spell(expr, node, 0, (leaf, name) => {
    const text = `${leaf}::VARCHAR`;
    if (name !== "DOUBLE") return text;
    // A JSON number starts with a digit or a minus sign; anything else keeps its spelling (and mismatches).
    const number = `(ascii(${text}) between 48 and 57 or ascii(${text}) = 45)`;
    return `case when ${number} and not coalesce(${inexactInteger(text)}, false) then to_json(${text}::DOUBLE)::VARCHAR else ${text} end`;
  });
}

/** The value `expr` of type `node`, read from the written Parquet, spelled. */
export function outputSpelling(expr: string, node: TypeNode): string {
  return spell(expr, node, 0, (leaf) => `to_json(${leaf})::VARCHAR`);
}

function spell(
  expr: string,
  node: TypeNode,
  depth: number,
  leaf: (expr: string, name: string) => string,
): string {
  switch (node.kind) {
    case "scalar":
      return leaf(expr, node.name);
    case "list": {
      const x = `x${depth}`;
      return `list_transform(${expr}, ${x} -> ${spell(x, node.of, depth + 1, leaf)})`;
    }
    case "struct": {
      const fields = node.fields.map(
        ([name, field]) => `${sqlString(name)}: ${spell(`${expr}[${sqlString(name)}]`, field, depth, leaf)}`,
      );
      return `case when ${expr} is null then null else {${fields.join(", ")}} end`;
    }
    case "map":
      throw new Error("a map is not spelled");
  }
}
