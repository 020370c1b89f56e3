/**
 * The grouping rule of discovery: which prefix an object belongs to, as one DuckDB expression over
 * its location-relative key (so it runs inside the aggregation, never per object in JavaScript).
 *
 * - Claimed first: an object under a claimed table's key (a registered or synced catalog table
 *   inside the location) belongs to that key's prefix (the longest one that holds it), so a table
 *   is one prefix however it is laid out.
 * - Otherwise, the object's folder with its trailing partition-like segments collapsed: `k=v`
 *   (Hive partitions), numbers (`2026`, `01`, `1700000000`) and dates or times (`2026-01-01`,
 *   `2026-01`, `2026-01-01T03`, `2026-01-01T03-00Z`). So `events/2026/01/01/a.json` and
 *   `events/dt=2026-01-02/hour=03/b.json` are both in `events/`, while `events/eu/a.json` is in
 *   `events/eu/`. Only trailing segments collapse: `2026/events/a.json` is in `2026/events/`.
 * - A prefix ends with `/`; an object directly in the location (or only under partition-like
 *   folders) is in the location itself, `""`. A folder marker (`events/`) is in its own folder.
 */

/** One partition-like folder name (RE2). */
const PARTITION_SEGMENT = "[^/=]+=[^/]*|[0-9]+|[0-9]{4}-[0-9]{2}(?:-[0-9]{2})?(?:[T_ ][0-9:.-]+Z?)?";

/** The folder of `rel` (no trailing `/`), its trailing partition-like segments removed. */
function folderExpr(rel: string): string {
  const folder = `regexp_replace(${rel}, '/[^/]*$', '')`;
  const inFolder = `case when contains(${rel}, '/') then ${folder} else '' end`;
  const collapsed = `ltrim(regexp_replace('/' || (${inFolder}), '(?:/(?:${PARTITION_SEGMENT}))+$', ''), '/')`;
  return `(case when ${collapsed} = '' then '' else ${collapsed} || '/' end)`;
}

/**
 * The prefix of the object whose location-relative key is the column `rel`; `claimedTable`, when
 * given, is a table of claimed relative keys in column `k` (each ending with `/`).
 */
export function prefixExpr(rel: string, claimedTable?: string): string {
  if (!claimedTable) return folderExpr(rel);
  return `coalesce((select max(c.k) from ${claimedTable} c where starts_with(${rel}, c.k)), ${folderExpr(rel)})`;
}
