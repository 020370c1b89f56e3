/**
 * Every value of a row as its JSON spelling (a DOUBLE as itself), in SQL: the yardstick of the
 * sampled conversion's lossless check (`sampled.ts`). The same row spelled from the input (each value read as the JSON
 * DuckDB parsed) and from the written Parquet (each typed value through `to_json`) hash the same
 * exactly when no value was cast: a number read into a VARCHAR column spells `"5"`, not `5`; a
 * fraction rounded into a BIGINT spells `2`, not `1.5`; text read as a number loses its quotes.
 *
 * Rules:
 * - Both sides keep the type's shape (structs, lists) with a VARCHAR (a DOUBLE for a DOUBLE) at
 *   every leaf, so a value can only match the value at the same place. Maps are not spelled (`spellable` is false): their
 *   keys are data, and a conversion with one takes the every-record path.
 * - A DOUBLE leaf is the double itself on both sides: the input's number read as a double
 *   (`100` and `100.0` are the same double); what is not a number (`"1.5"`, `true`), and an
 *   integer a double does not hold exactly, is NULL on the input side where the written value is
 *   not, so it never matches (the every-record path retypes it). Spelling the double as text
 *   instead (`to_json`) cost as much as the rest of the input side's spelling together.
 * - Every other leaf is spelled by yyjson on both sides (DuckDB's JSON reader and `to_json`), so
 *   an escaped string and a nested JSON value print the same on both.
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
    // A JSON number starts with a digit or a minus sign (byte comparisons, no decoding).
    const number = `((${text} >= '0' and ${text} < ':') or (${text} >= '-' and ${text} < '.'))`;
    return `case when not ${number} then NULL::DOUBLE when strlen(${text}) >= 16 and coalesce(${inexactInteger(text)}, false) then NULL::DOUBLE else ${text}::DOUBLE end`;
  });
}

/** The value `expr` of type `node`, read from the written Parquet, spelled. */
export function outputSpelling(expr: string, node: TypeNode): string {
  return spell(expr, node, 0, (leaf, name) => (name === "DOUBLE" ? leaf : `to_json(${leaf})::VARCHAR`));
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
