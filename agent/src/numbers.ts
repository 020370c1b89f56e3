/** Arithmetic over lists that crunch, the formats and maintenance share. */

/** The sum of `values`; 0 for none. */
export function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
