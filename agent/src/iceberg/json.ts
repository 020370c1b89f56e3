/**
 * JSON with 64-bit integers. Iceberg metadata holds snapshot ids such as 4468019210336628573,
 * which `JSON.parse` rounds to the nearest double, so a later lookup or rewrite of the metadata
 * would name a snapshot that does not exist. `lossless-json` reads the number's text instead.
 *
 * - `parseJson`: integers outside ±2^53 come back as `bigint`, every other number as `number`
 *   (a float that doubles can't hold exactly is rounded, as `JSON.parse` does).
 * - `stringifyJson`: the inverse; a `bigint` is written as a bare integer.
 * - `parseJson(stringifyJson(x))` deep-equals `x` for every value `parseJson` returns.
 */
import { isInteger, isSafeNumber, parse, stringify } from "lossless-json";
import { IcebergError } from "./errors.ts";

/** Parses JSON text, keeping integers beyond `Number.MAX_SAFE_INTEGER` exact as `bigint`. */
export function parseJson(text: string): unknown {
  try {
    return parse(text, null, (value) =>
      isInteger(value) && !isSafeNumber(value) ? BigInt(value) : Number.parseFloat(value),
    );
  } catch (err) {
    throw new IcebergError("corrupt", `not valid JSON: ${(err as Error).message}`);
  }
}

/** `JSON.stringify` that writes `bigint` values as integers. */
export function stringifyJson(value: unknown, indent?: number): string {
  return stringify(value, null, indent) ?? "null";
}
