/**
 * A catalog's namespace tree, built from its live tables' namespaces (`catalog_tables.schema`,
 * levels joined by `.`). A namespace holding no table directly still appears when one beneath it
 * does (`a.b.c` implies `a` and `a.b`).
 *
 * - Order: depth first, parents before children, siblings by name (compared level by level, so
 *   `a.b` follows `a` before its sibling `a-c` does).
 * - Bounds: one node per distinct namespace path; the caller reads one row per distinct namespace.
 */

export interface NamespaceNode {
  namespace: string;
  levels: string[];
  parent: string | null;
  depth: number;
  children_count: number;
  tables_count: number;
  total_tables_count: number;
}

/** The tree of the namespaces in `counts` (tables directly in each), in depth-first order. */
export function namespaceTree(counts: readonly { schema: string; tables: number }[]): NamespaceNode[] {
  const nodes = new Map<string, NamespaceNode>();
  const node = (levels: string[]): NamespaceNode => {
    const namespace = levels.join(".");
    let found = nodes.get(namespace);
    if (!found) {
      found = {
        namespace,
        levels,
        parent: levels.length > 1 ? levels.slice(0, -1).join(".") : null,
        depth: levels.length,
        children_count: 0,
        tables_count: 0,
        total_tables_count: 0,
      };
      nodes.set(namespace, found);
      if (found.parent !== null) node(levels.slice(0, -1)).children_count++;
    }
    return found;
  };
  for (const { schema, tables } of counts) {
    const levels = schema.split(".");
    node(levels).tables_count += tables;
    for (let depth = 1; depth <= levels.length; depth++)
      node(levels.slice(0, depth)).total_tables_count += tables;
  }
  return [...nodes.values()].sort((a, b) => compareLevels(a.levels, b.levels));
}

/** Depth-first order of two namespace paths, level by level. */
export function compareLevels(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i] as string;
    const y = b[i] as string;
    if (x !== y) return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** Whether `namespace` lies strictly beneath `prefix` (whole levels: `a.b` is under `a`, `ab` is not). */
export const isUnder = (namespace: string, prefix: string) => namespace.startsWith(`${prefix}.`);
