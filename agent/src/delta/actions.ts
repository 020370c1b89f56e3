/**
 * Delta log actions (PROTOCOL.md, "Actions") as typed objects: parsed from a JSON commit line or a
 * checkpoint row (both arrive as the same JSON shape), and written back as log JSON.
 *
 * File paths are kept twice: `rawPath` exactly as the log holds it (a URI, percent-encoded), which
 * is what a later `remove` must repeat, and `path`, decoded once: the store key of a relative path,
 * or the absolute URI of an absolute one (see `dataFileLocation`).
 */
import type { ObjectStore } from "../store/index.ts";
import { parseSchema, type StructType } from "./schema.ts";

export interface Protocol {
  minReaderVersion: number;
  minWriterVersion: number;
  readerFeatures?: string[] | null;
  writerFeatures?: string[] | null;
}

export interface Metadata {
  id: string;
  name?: string | null;
  description?: string | null;
  format: { provider: string; options: Record<string, string> };
  schemaString: string;
  /** The parsed schema; empty when `schemaString` is missing or malformed (see `schemaError`). */
  schema: StructType;
  /** Why `schemaString` could not be parsed; such a table loads but is refused for writing. */
  schemaError?: string;
  partitionColumns: string[];
  configuration: Record<string, string>;
  createdTime?: number | null;
}

export interface DeletionVector {
  storageType: string;
  pathOrInlineDv: string;
  offset?: number | null;
  sizeInBytes: number;
  cardinality: number;
  maxRowIndex?: number | null;
}

export interface FileStats {
  numRecords?: number;
  minValues?: Record<string, unknown>;
  maxValues?: Record<string, unknown>;
  nullCount?: Record<string, unknown>;
  tightBounds?: boolean;
}

export type PartitionValues = Record<string, string | null>;

export interface AddFile {
  /** Decoded: a store key (relative) or an absolute URI. */
  path: string;
  /** As written in the log (percent-encoded URI). */
  rawPath: string;
  partitionValues: PartitionValues;
  size: number;
  modificationTime: number;
  dataChange: boolean;
  stats: FileStats | null;
  /** The stats as the log holds them (a JSON string), for checkpoints; null when there are none. */
  statsJson: string | null;
  tags: Record<string, string> | null;
  deletionVector: DeletionVector | null;
  baseRowId?: number | null;
  defaultRowCommitVersion?: number | null;
  clusteringProvider?: string | null;
}

export interface RemoveFile {
  path: string;
  rawPath: string;
  deletionTimestamp: number | null;
  dataChange: boolean;
  extendedFileMetadata?: boolean | null;
  partitionValues?: PartitionValues | null;
  size?: number | null;
  tags?: Record<string, string> | null;
  deletionVector?: DeletionVector | null;
}

export interface Txn {
  appId: string;
  version: number;
  lastUpdated?: number | null;
}

export interface DomainMetadata {
  domain: string;
  configuration: string;
  removed: boolean;
}

export type CommitInfo = Record<string, unknown>;

export type Action =
  | { add: AddFile }
  | { remove: RemoveFile }
  | { metaData: Metadata }
  | { protocol: Protocol }
  | { txn: Txn }
  | { domainMetadata: DomainMetadata }
  | { commitInfo: CommitInfo }
  /** A V2-checkpoint pointer to a sidecar file; only ever found in checkpoints. */
  | { sidecar: { path: string } };

type Raw = Record<string, unknown>;

/**
 * One action from its log JSON (`{"add": {...}}`); undefined for actions that do not change the
 * snapshot the agent keeps (`cdc`, `checkpointMetadata`) or that it does not know.
 */
export function parseAction(raw: Raw): Action | undefined {
  if (isObject(raw.add)) return { add: parseAdd(raw.add) };
  if (isObject(raw.remove)) return { remove: parseRemove(raw.remove) };
  if (isObject(raw.metaData)) return { metaData: parseMetadata(raw.metaData) };
  if (isObject(raw.protocol)) return { protocol: parseProtocol(raw.protocol) };
  if (isObject(raw.txn)) return { txn: raw.txn as unknown as Txn };
  if (isObject(raw.domainMetadata)) {
    const d = raw.domainMetadata;
    return {
      domainMetadata: {
        domain: String(d.domain),
        configuration: String(d.configuration ?? ""),
        removed: d.removed === true,
      },
    };
  }
  if (isObject(raw.commitInfo)) return { commitInfo: raw.commitInfo };
  if (isObject(raw.sidecar)) return { sidecar: { path: String(raw.sidecar.path) } };
  return undefined;
}

/** Parses a newline-delimited JSON commit into actions (blank lines skipped). */
export function parseCommit(text: string): Action[] {
  const actions: Action[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const action = parseAction(JSON.parse(line) as Raw);
    if (action) actions.push(action);
  }
  return actions;
}

function parseAdd(a: Raw): AddFile {
  const rawPath = String(a.path);
  const { stats, statsJson } = parseStats(a.stats, a.stats_parsed);
  return {
    path: decodePath(rawPath),
    rawPath,
    partitionValues: (a.partitionValues as PartitionValues | null) ?? {},
    size: Number(a.size),
    modificationTime: Number(a.modificationTime ?? 0),
    dataChange: a.dataChange !== false,
    stats,
    statsJson,
    tags: (a.tags as Record<string, string> | null) ?? null,
    deletionVector: (a.deletionVector as DeletionVector | null) ?? null,
    baseRowId: optionalNumber(a.baseRowId),
    defaultRowCommitVersion: optionalNumber(a.defaultRowCommitVersion),
    clusteringProvider: (a.clusteringProvider as string | null | undefined) ?? null,
  };
}

function parseRemove(r: Raw): RemoveFile {
  const rawPath = String(r.path);
  return {
    path: decodePath(rawPath),
    rawPath,
    deletionTimestamp: optionalNumber(r.deletionTimestamp),
    dataChange: r.dataChange !== false,
    extendedFileMetadata: (r.extendedFileMetadata as boolean | null | undefined) ?? null,
    partitionValues: (r.partitionValues as PartitionValues | null | undefined) ?? null,
    size: optionalNumber(r.size),
    tags: (r.tags as Record<string, string> | null | undefined) ?? null,
    deletionVector: (r.deletionVector as DeletionVector | null | undefined) ?? null,
  };
}

function parseMetadata(m: Raw): Metadata {
  const schemaString = typeof m.schemaString === "string" ? m.schemaString : "";
  const format = (m.format as Metadata["format"] | null) ?? { provider: "parquet", options: {} };
  // An early metaData without a schema (Delta Live Tables writes one) must not stop the log loading.
  let schema: StructType = { kind: "struct", fields: [] };
  let schemaError: string | undefined;
  try {
    schema = parseSchema(schemaString);
  } catch (err) {
    schemaError = schemaString === "" ? "the table has no schema" : (err as Error).message;
  }
  return {
    ...(schemaError ? { schemaError } : {}),
    id: String(m.id),
    name: (m.name as string | null | undefined) ?? null,
    description: (m.description as string | null | undefined) ?? null,
    format: { provider: format.provider ?? "parquet", options: format.options ?? {} },
    schemaString,
    schema,
    partitionColumns: (m.partitionColumns as string[] | null) ?? [],
    configuration: (m.configuration as Record<string, string> | null) ?? {},
    createdTime: optionalNumber(m.createdTime),
  };
}

function parseProtocol(p: Raw): Protocol {
  return {
    minReaderVersion: Number(p.minReaderVersion),
    minWriterVersion: Number(p.minWriterVersion),
    readerFeatures: (p.readerFeatures as string[] | null | undefined) ?? null,
    writerFeatures: (p.writerFeatures as string[] | null | undefined) ?? null,
  };
}

/** Stats from the JSON string, or from the struct a checkpoint may carry instead (`stats_parsed`). */
function parseStats(json: unknown, parsed: unknown): { stats: FileStats | null; statsJson: string | null } {
  if (typeof json === "string" && json !== "") {
    return { stats: normaliseStats(JSON.parse(json) as Raw), statsJson: json };
  }
  if (isObject(parsed)) {
    const stats = normaliseStats(parsed);
    return { stats, statsJson: JSON.stringify(stats) };
  }
  return { stats: null, statsJson: null };
}

function normaliseStats(s: Raw): FileStats {
  const stats: FileStats = {};
  if (s.numRecords !== undefined && s.numRecords !== null) stats.numRecords = Number(s.numRecords);
  if (isObject(s.minValues)) stats.minValues = s.minValues;
  if (isObject(s.maxValues)) stats.maxValues = s.maxValues;
  if (isObject(s.nullCount)) stats.nullCount = s.nullCount;
  if (typeof s.tightBounds === "boolean") stats.tightBounds = s.tightBounds;
  return stats;
}

function optionalNumber(value: unknown): number | null {
  return value === undefined || value === null ? null : Number(value);
}

function isObject(value: unknown): value is Raw {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A path with a URI scheme (`s3://`, `file:/`) or a leading `/` is absolute; others are relative. */
export function isAbsolutePath(rawPath: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(rawPath) || rawPath.startsWith("/");
}

/** Decodes a log path once (`a%20b` → `a b`); a malformed escape leaves the path as it is. */
export function decodePath(rawPath: string): string {
  if (isAbsolutePath(rawPath)) return rawPath;
  try {
    return decodeURIComponent(rawPath);
  } catch {
    return rawPath;
  }
}

/**
 * A relative store key as a log path: each segment percent-encoded (so `%`, spaces and `:` survive
 * a reader's URI decoding), `=` kept readable for Hive-style partition folders.
 */
export function encodePath(key: string): string {
  return key
    .split("/")
    .map((segment) => encodeURIComponent(segment).replaceAll("%3D", "="))
    .join("/");
}

/**
 * Where a data file lives: a key in the table's store (relative paths, and absolute ones under the
 * table root), or an absolute URI outside it, which the agent must not touch through this store.
 */
export function dataFileLocation(
  store: Pick<ObjectStore, "uri">,
  file: Pick<AddFile, "rawPath">,
): { key: string } | { uri: string } {
  const raw = file.rawPath;
  if (!isAbsolutePath(raw)) return { key: decodePath(raw) };
  // Spark writes `file:/x`; the store's URI is `file:///x/`.
  const uri = raw.startsWith("file:/") && !raw.startsWith("file://") ? `file://${raw.slice(5)}` : raw;
  if (uri.startsWith(store.uri)) {
    const rest = uri.slice(store.uri.length);
    try {
      return { key: decodeURIComponent(rest) };
    } catch {
      return { key: rest };
    }
  }
  return { uri };
}

/** The add as log JSON (`add` value). */
export function addToJson(add: AddFile): Raw {
  const json: Raw = {
    path: add.rawPath,
    partitionValues: add.partitionValues,
    size: add.size,
    modificationTime: add.modificationTime,
    dataChange: add.dataChange,
  };
  if (add.statsJson !== null) json.stats = add.statsJson;
  if (add.tags) json.tags = add.tags;
  if (add.deletionVector) json.deletionVector = add.deletionVector;
  if (add.baseRowId != null) json.baseRowId = add.baseRowId;
  if (add.defaultRowCommitVersion != null) json.defaultRowCommitVersion = add.defaultRowCommitVersion;
  if (add.clusteringProvider) json.clusteringProvider = add.clusteringProvider;
  return json;
}

/** The remove as log JSON (`remove` value). */
export function removeToJson(remove: RemoveFile): Raw {
  const json: Raw = {
    path: remove.rawPath,
    deletionTimestamp: remove.deletionTimestamp,
    dataChange: remove.dataChange,
  };
  if (remove.extendedFileMetadata) {
    json.extendedFileMetadata = true;
    json.partitionValues = remove.partitionValues ?? {};
    json.size = remove.size;
    if (remove.tags) json.tags = remove.tags;
  }
  if (remove.deletionVector) json.deletionVector = remove.deletionVector;
  return json;
}

/** The metaData as log JSON, without the parsed schema. */
export function metadataToJson(metadata: Metadata): Raw {
  const { schema: _schema, schemaError: _error, ...json } = metadata;
  return json;
}

/**
 * A compaction's remove for an active file: `dataChange: false` (the rows live on in the rewritten
 * files), with the file's partition values and size so readers of this commit alone know the file.
 */
export function removeFor(file: AddFile, deletionTimestamp: number): RemoveFile {
  return {
    path: file.path,
    rawPath: file.rawPath,
    deletionTimestamp,
    dataChange: false,
    extendedFileMetadata: true,
    partitionValues: file.partitionValues,
    size: file.size,
    tags: file.tags,
    deletionVector: null,
  };
}

/** What a rewrite knows about a file it wrote; `key` is relative to the table root. */
export interface NewFile {
  key: string;
  size: number;
  modificationTime: number;
  partitionValues: PartitionValues;
  stats: FileStats | null;
  tags?: Record<string, string> | null;
}

/** A compaction's add for a rewritten file: `dataChange: false`, stats as a JSON string. */
export function addFor(file: NewFile): AddFile {
  return {
    path: file.key,
    rawPath: encodePath(file.key),
    partitionValues: file.partitionValues,
    size: file.size,
    modificationTime: file.modificationTime,
    dataChange: false,
    stats: file.stats,
    statsJson: file.stats ? JSON.stringify(file.stats) : null,
    tags: file.tags ?? null,
    deletionVector: null,
  };
}
