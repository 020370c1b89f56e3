/**
 * A partition as a Hive-style path, `col=value/...`, in partition-column order, with a null value as
 * `__HIVE_DEFAULT_PARTITION__`: the one place that writes it. `escaped` percent-escapes the
 * characters Hive-style writers escape in folder names (a written file's folder); unescaped it is
 * the partition's label in plans and results.
 */

/** The value Hive-style writers give a null partition. */
export const NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__";

/** Characters Hive-style writers percent-escape in partition folder names (besides control characters). */
const ESCAPED = new Set(`"#%'*/:=?\\{[]^`);

export function partitionPath(
  values: Record<string, string | null>,
  columns: readonly string[],
  options: { escaped?: boolean } = {},
): string {
  const part = options.escaped ? escapePartition : (s: string) => s;
  return columns.map((c) => `${part(c)}=${part(values[c] ?? NULL_PARTITION)}`).join("/");
}

/** The folder a partition's files are written to: its escaped path and `/`; `""` unpartitioned. */
export function partitionFolder(values: Record<string, string | null>, columns: readonly string[]): string {
  return columns.length === 0 ? "" : `${partitionPath(values, columns, { escaped: true })}/`;
}

function escapePartition(value: string): string {
  let out = "";
  for (const c of value) {
    const code = c.charCodeAt(0);
    out +=
      code < 0x20 || code === 0x7f || ESCAPED.has(c)
        ? `%${code.toString(16).toUpperCase().padStart(2, "0")}`
        : c;
  }
  return out;
}
