/**
 * The scan nodes of one Spark physical plan. File scans (`Scan parquet db.t`, Databricks'
 * `PhotonScan parquet …`) carry their `Location`, filters and `ReadSchema` as node metadata in
 * `sparkPlanInfo`; DataSource V2 scans (`BatchScan`) carry none there, so theirs are read from the
 * node's section of `physicalPlanDescription` (`(1) BatchScan …` followed by `Key: value` lines).
 * The same scan reused by a subquery or an exchange appears once.
 */
import { columnsOf, type Predicate, predicatesOf, splitList } from "./filters.ts";

/** A plan node as `sparkPlanInfo` serialises it. */
export interface SparkPlanInfo {
  nodeName: string;
  simpleString?: string;
  children?: SparkPlanInfo[];
  metadata?: Record<string, string>;
  metrics?: { name: string; accumulatorId: number; metricType?: string }[];
}

export interface SparkScan {
  /** The node's name: `Scan parquet`, `PhotonScan parquet`, `BatchScan`. */
  node: string;
  format?: string;
  /** The catalog table when the plan names one (`spark_catalog.db.store_sales`). */
  table?: string;
  /** The file index kind: `InMemoryFileIndex`, `PreparedDeltaFileIndex`, `CatalogFileIndex`… */
  locationKind?: string;
  /** The table's root path(s) the index lists. */
  locations: string[];
  partitionFilters: string[];
  pushedFilters: string[];
  dataFilters: string[];
  readSchema?: string;
  /** Every column any of the filters references, in first-seen order. */
  filterColumns: string[];
  /** The column-versus-literal predicates of the filters, each once. */
  predicates: Predicate[];
}

/** Metric names whose value is the bytes a scan read. */
const BYTES_READ = new Set([
  "size of files read",
  "bytes read",
  "files size read",
  "size of files read (bytes)",
]);

/** The scans of a plan, and the accumulator ids of their bytes-read metrics. */
export function scansOf(
  info: SparkPlanInfo | undefined,
  description: string | undefined,
): { scans: SparkScan[]; bytesReadAccumulators: number[] } {
  const scans = new Map<string, SparkScan>();
  const accumulators: number[] = [];
  const visit = (node: SparkPlanInfo) => {
    const meta = node.metadata;
    if (meta && (meta.Location !== undefined || meta.ReadSchema !== undefined)) {
      add(scans, scanFrom(node.nodeName, meta));
      for (const m of node.metrics ?? []) if (BYTES_READ.has(m.name)) accumulators.push(m.accumulatorId);
    }
    for (const child of node.children ?? []) visit(child);
  };
  if (info) visit(info);
  for (const section of batchScanSections(description ?? ""))
    add(scans, scanFrom(section.name, section.fields));
  return { scans: [...scans.values()], bytesReadAccumulators: accumulators };
}

function add(scans: Map<string, SparkScan>, scan: SparkScan): void {
  const key = JSON.stringify([
    scan.table,
    scan.locations,
    scan.partitionFilters,
    scan.pushedFilters,
    scan.dataFilters,
  ]);
  if (!scans.has(key)) scans.set(key, scan);
}

function scanFrom(nodeName: string, meta: Record<string, string>): SparkScan {
  const name = nodeName.trim();
  const words = name.split(/\s+/);
  const isBatch = words[0] === "BatchScan";
  const format = meta.Format?.toLowerCase() ?? (isBatch ? undefined : words[1]?.toLowerCase());
  const table = isBatch ? words[1] : words[2];
  const location = /^\s*([\w$.]+?)(?:\(\d+ paths?\))?\[(.*)\]\s*$/s.exec(meta.Location ?? "");
  const partitionFilters = splitList(meta.PartitionFilters);
  const pushedFilters = splitList(meta.PushedFilters ?? meta.PushedFilers);
  const dataFilters = splitList(meta.DataFilters);
  const all = [...partitionFilters, ...pushedFilters, ...dataFilters];
  const columns = new Set(all.flatMap(columnsOf));
  const predicates = new Map<string, Predicate>();
  for (const p of all.flatMap(predicatesOf)) predicates.set(JSON.stringify(p), p);
  return {
    node: isBatch ? "BatchScan" : words.slice(0, 2).join(" "),
    format,
    table: table === undefined || table === "" ? undefined : table,
    locationKind: location?.[1],
    locations: location ? splitList(location[2]) : [],
    partitionFilters,
    pushedFilters,
    dataFilters,
    readSchema: meta.ReadSchema,
    filterColumns: [...columns],
    predicates: [...predicates.values()],
  };
}

/** The `(n) BatchScan …` sections of a formatted plan, as name and fields. */
function* batchScanSections(description: string): Iterable<{ name: string; fields: Record<string, string> }> {
  const header = /^\(\d+\) (BatchScan.*)$/gm;
  for (let m = header.exec(description); m; m = header.exec(description)) {
    const end = description.indexOf("\n\n", m.index);
    const body = description.slice(m.index + m[0].length, end === -1 ? undefined : end);
    const fields: Record<string, string> = {};
    for (const line of body.split("\n")) {
      const colon = line.indexOf(": ");
      if (colon > 0) fields[line.slice(0, colon).trim()] = line.slice(colon + 2);
    }
    yield { name: m[1] ?? "BatchScan", fields };
  }
}
