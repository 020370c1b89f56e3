/**
 * What the maintenance tests share: a job context without a control plane, private copies of
 * fixture tables, a table's rows read through its current snapshot, and small log edits another
 * writer could make (a table property, a file re-added).
 */
import { cpSync, mkdtempSync } from "node:fs";
import { appendFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pino } from "pino";
import { commitKey, loadSnapshot, metadataToJson, type Snapshot } from "../../src/delta/index.ts";
import { Engine, sqlList } from "../../src/engine/duckdb.ts";
import type { JobContext } from "../../src/registry.ts";
import { localPaths, type ObjectStore } from "../../src/store/index.ts";
import { DELTA_FIXTURES } from "./fixtures.ts";

let jobs = 0;

/** A job context as the runner gives one, with a fresh scratch folder under `root`. */
export function jobContext<P>(
  root: string,
  kind: string,
  payload: P,
  options: { jobId?: string; signal?: AbortSignal; part?: JobContext<P>["part"] } = {},
): JobContext<P> & { reports: Record<string, unknown>[] } {
  const reports: Record<string, unknown>[] = [];
  return {
    job: {
      id: options.jobId ?? `job_${String(++jobs).padStart(20, "0")}`,
      kind,
      fence: 1,
      attempt: 1,
      priority: "P2",
      table_id: "tbl_test",
      payload: payload as Record<string, unknown>,
    },
    payload,
    signal: options.signal ?? new AbortController().signal,
    scratchDir: mkdtempSync(join(root, "scratch-")),
    progress: (p) => reports.push(p),
    part: options.part ?? (() => Promise.reject(new Error(`a ${kind} job sends no parts`))),
    log: pino({ level: "silent" }),
    reports,
  };
}

/** A private copy of a fixture table (tests never write to the fixtures). */
export function copyFixture(name: string, root: string): string {
  const path = mkdtempSync(join(root, `${name}-`));
  cpSync(join(DELTA_FIXTURES, name), path, { recursive: true });
  return path;
}

export interface TableRead {
  snapshot: Snapshot;
  /** Rows DuckDB reads from the live files. */
  rows: number;
  /** The sum of the live files' `numRecords`. */
  statsRows: number;
  /** Live files whose object is missing from the store. */
  missing: string[];
}

/** Reads the table through its current snapshot: every live file must exist for the count to run. */
export async function readTable(store: ObjectStore, scratch: string): Promise<TableRead> {
  const engine = await Engine.open({ memoryLimitMb: 256 });
  try {
    const snapshot = await loadSnapshot(store, engine, { scratchDir: mkdtempSync(join(scratch, "log-")) });
    const keys = snapshot.files.map((f) => f.path);
    const missing: string[] = [];
    for (const key of keys) if (!(await store.head(key))) missing.push(key);
    const statsRows = snapshot.files.reduce((n, f) => n + (f.stats?.numRecords ?? 0), 0);
    if (missing.length > 0 || keys.length === 0) return { snapshot, rows: 0, statsRows, missing };
    const paths = await localPaths(store, keys, mkdtempSync(join(scratch, "read-")));
    const [row] = await engine.query<{ n: string }>(
      `select count(*) as n from read_parquet(${sqlList(paths)}, union_by_name = true)`,
    );
    return { snapshot, rows: Number(row?.n), statsRows, missing };
  } finally {
    engine.close();
  }
}

/** The newest JSON commit version of a local table. */
export async function latestVersion(path: string): Promise<number> {
  const names = await readdir(join(path, "_delta_log"));
  return Math.max(-1, ...names.filter((n) => /^\d{20}\.json$/.test(n)).map((n) => Number(n.slice(0, 20))));
}

/** Commits raw actions as the next version of a local table, the way another writer would. */
export async function commitRaw(path: string, actions: object[], operation = "WRITE"): Promise<number> {
  const version = (await latestVersion(path)) + 1;
  const lines = [{ commitInfo: { timestamp: Date.now(), operation } }, ...actions];
  await writeFile(join(path, commitKey(version)), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`, {
    flag: "wx",
  });
  return version;
}

/** Sets table properties with a metaData commit (as `ALTER TABLE ... SET TBLPROPERTIES` does). */
export async function setTableProperties(
  path: string,
  snapshot: Snapshot,
  properties: Record<string, string>,
): Promise<number> {
  const metaData = metadataToJson({
    ...snapshot.metadata,
    configuration: { ...snapshot.metadata.configuration, ...properties },
  });
  return commitRaw(path, [{ metaData }], "SET TBLPROPERTIES");
}

/** Adds a file back by path, as a concurrent writer restoring it would (size as given). */
export function readdAction(file: {
  path: string;
  size: number;
  partitionValues: object;
  stats?: string | null;
}) {
  return {
    add: {
      path: file.path,
      partitionValues: file.partitionValues,
      size: file.size,
      modificationTime: Date.now(),
      dataChange: true,
      ...(file.stats ? { stats: file.stats } : {}),
    },
  };
}

/** Appends a line to a file (a stray write into the table folder). */
export const touch = (path: string, text = "x") => appendFile(path, text);
