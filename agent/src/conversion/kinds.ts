/**
 * Whether every value of a column holds the JSON kind its type stands for, in SQL: the yardstick
 * of the sampled conversion's lossless check (`sampled.ts`). DuckDB's typed JSON reader converts a
 * value of another kind without an error (a number into a VARCHAR column as its text, `1.5` into
 * a BIGINT as `2`, the text `"5"` into a BIGINT as `5`, `true` into a DOUBLE as `1.0`, `1` into a
 * BOOLEAN as `true`), but a value of its column's kind exactly: a string into VARCHAR as its
 * characters, an integer into BIGINT or UBIGINT as itself (one out of range fails the read), a
 * number into DOUBLE as the double every JSON parser reads, `true`/`false` into BOOLEAN. Lists and
 * structs of another kind, and keys the sample did not have, fail the sampled read itself. So a
 * read whose every value has its column's kind cast nothing.
 *
 * Rules:
 * - The input is read with every leaf as `JSON` (each value as DuckDB parsed it, written back by
 *   yyjson), and a value's kind is read from its first bytes: `"` a string, a digit or `-` a
 *   number, `true`/`false` a boolean; an integer has no `.`, `e` or `E` (yyjson writes every
 *   double with one of them, `100.0` for `1E2`).
 * - A DOUBLE leaf's number is a misfit when it is an integer a double does not hold exactly (at
 *   least 16 digits; the every-record path retypes it).
 * - Maps are not checked (`checkable` is false): their keys are data, and a conversion with one
 *   takes the every-record path.
 */
import { sqlString } from "../engine/duckdb.ts";
import type { TypeNode } from "../engine/type-spelling.ts";
import { inexactInteger } from "./schema.ts";

/** Whether every leaf of the type can be checked (no map at any depth). */
export function checkable(node: TypeNode): boolean {
  switch (node.kind) {
    case "scalar":
      return true;
    case "list":
      return checkable(node.of);
    case "struct":
      return node.fields.every(([, f]) => checkable(f));
    case "map":
      return false;
  }
}

/**
 * SQL: whether the value `expr` (read with every leaf as `JSON`) holds, at any depth, a leaf whose
 * JSON kind is not its type's in `node`; NULL where it holds no non-null leaf (so `bool_or`, which
 * skips NULLs, aggregates it).
 */
export function misfitIn(expr: string, node: TypeNode, depth = 0): string {
  switch (node.kind) {
    case "scalar":
      return `not ${kindTest(`${expr}::VARCHAR`, node.name)}`;
    case "list": {
      const x = `x${depth}`;
      return `list_bool_or(list_transform(${expr}, ${x} -> ${misfitIn(x, node.of, depth + 1)}))`;
    }
    case "struct":
      return `(${node.fields.map(([name, field]) => misfitIn(`${expr}[${sqlString(name)}]`, field, depth)).join(" or ")})`;
    case "map":
      throw new Error("a map is not checked");
  }
}

/** SQL: whether the JSON text `t` of a value is of the kind a `type` leaf holds exactly (NULL for NULL). */
function kindTest(t: string, type: string): string {
  // Byte comparisons on the text's start: no decoding.
  const number = `((${t} >= '0' and ${t} < ':') or (${t} >= '-' and ${t} < '.'))`;
  switch (type) {
    case "VARCHAR":
      return `(${t} >= '"' and ${t} < '#')`;
    case "BIGINT":
    case "UBIGINT":
      return `(${number} and not contains(${t}, '.') and not contains(${t}, 'e') and not contains(${t}, 'E'))`;
    case "DOUBLE":
      // A CASE, so the exactness test runs only on the few values long enough to fail it (SQL's
      // and/or evaluate both sides: 0.35 CPU-s per 256 MB of the bench's JSON, against 0.05).
      return `(${number} and case when strlen(${t}) < 16 then true else not coalesce(${inexactInteger(t)}, false) end)`;
    case "BOOLEAN":
      return `(${t} = 'true' or ${t} = 'false')`;
    default:
      throw new Error(`no JSON kind check for ${type}`);
  }
}
