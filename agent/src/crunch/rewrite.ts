/**
 * One bin's rewrite: the input checksum, then the files DuckDB writes with the chosen settings, with
 * the output's checksum taken as they are written. Unsorted, a bin is one `COPY` that DuckDB splits
 * at the target file size. Sorted (linear or Z-order), the bin is written in chunks of its input
 * files (`sortChunks`), each within the rows a sort may hold in memory (`sortChunkRows`), so that the
 * sort's memory does not grow with the bin; each chunk is sorted once and written as files near the
 * target size at the output ratio seen so far, each a stretch of the chunk's order, so that files
 * cover narrow, mostly disjoint ranges of the sort columns and readers skip them.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import {
  type Checksum,
  checksumOf,
  type Engine,
  estimateRowBytes,
  type RewriteResult,
  readAsColumns,
  rewriteFiles,
  sortChunkRows,
  sqlList,
  sumChecksums,
  type TableColumn,
  type WrittenFile,
} from "../engine/index.ts";
import type { TableFile } from "../formats/index.ts";
import { sum } from "../numbers.ts";
import { flushFiles, type ObjectStore } from "../store/index.ts";
import type { Phases } from "./metrics.ts";
import { balancedBins } from "./plan.ts";

/** One bin to rewrite, with what its rewrite needs. */
/**
 * Output bytes per input byte assumed for a crunch's first sorted bin, to size its chunks and files
 * (later bins use the ratio measured so far): zstd rewrites of small snappy files wrote 0.4-0.6 of
 * their input.
 */
export const FIRST_OUTPUT_RATIO = 0.5;

/** The files a sorted rewrite of `inputBytes` writes: each near `targetBytes` at `outputRatio`. */
export function sortedFileCount(inputBytes: number, outputRatio: number, targetBytes: number): number {
  return Math.max(1, Math.round((inputBytes * outputRatio) / targetBytes));
}

export interface BinJob {
  store: ObjectStore;
  bin: readonly TableFile[];
  /** Local paths of the bin's files, in the bin's order. */
  inputs: string[];
  columns: readonly TableColumn[];
  settings: CrunchSettings;
  /** Parquet field ids for the written files (DuckDB's `FIELD_IDS`), where the format asks for them. */
  fieldIds: string | null;
  targetBytes: number;
  /** Bytes written per byte read so far in this crunch (an assumption before the first bin). */
  outputRatio: number;
  binDir: string;
}

/** A rewritten bin, not yet validated: its files are in `outDir`, in the bin's scratch folder. */
export interface RewrittenBin {
  files: WrittenFile[];
  outDir: string;
  /** The checksum of the inputs, read as the table's columns. */
  before: Checksum;
  /** The checksum of the rows written, taken as they were written. */
  after: Checksum;
}

export async function rewriteBin(engine: Engine, phases: Phases, job: BinJob): Promise<RewrittenBin> {
  const outDir = join(job.binDir, "out");
  // The inputs are read as the table's columns twice, for their checksum and by the rewrite.
  const source = await phases.time("validate", () => readAsColumns(engine, job.inputs, job.columns));
  const before = await phases.time("validate", () => checksumOf(engine, source, job.columns));
  const chunks =
    job.settings.sort_columns.length > 0
      ? await phases.time("rewrite", () => sortChunks(engine, job))
      : [{ paths: job.inputs, bytes: 0 }];
  return phases.time("rewrite", async () => {
    const parts: RewriteResult[] = [];
    for (const chunk of chunks)
      parts.push(
        await rewriteFiles(engine, {
          ...(chunks.length === 1 ? { source } : {}),
          inputs: chunk.paths,
          sortedFiles: sortedFileCount(chunk.bytes, job.outputRatio, job.targetBytes),
          columns: job.columns,
          outDir,
          namePrefix: `part-${randomUUID()}`,
          settings: job.settings,
          ...(job.fieldIds ? { fieldIds: job.fieldIds } : {}),
          targetFileBytes: job.targetBytes,
          // A local table takes the files by a rename (upload.ts): their flush to disk, which that
          // write must wait for, runs beside the output checksum instead.
          ...(job.store.localFile ? { onWritten: flushFiles } : {}),
        }),
      );
    return {
      files: parts.flatMap((p) => p.files),
      outDir,
      before,
      after: sumChecksums(
        job.columns,
        parts.map((p) => p.checksum),
      ),
    };
  });
}

/**
 * The inputs of a sorted bin in chunks of at most the rows one sort may hold, each to be sorted
 * once; without a row size to go by, chunks near one output file.
 */
async function sortChunks(
  engine: Engine,
  job: Pick<BinJob, "bin" | "inputs" | "columns" | "settings" | "targetBytes" | "outputRatio">,
): Promise<{ paths: string[]; bytes: number }[]> {
  const files = job.inputs.map((path, i) => ({ path, size: job.bin[i]?.size ?? 0 }));
  const bytes = sum(files.map((f) => f.size));
  const bytesPerRow =
    job.settings.tuned_with?.bytes_per_row ??
    (await estimateRowBytes(engine, job.inputs.slice(0, 1), job.columns));
  let maxBytes = job.targetBytes / job.outputRatio;
  if (bytesPerRow && bytes > 0) {
    const [row] = await engine.query<{ rows: string }>(
      `select sum(num_rows)::bigint as rows from parquet_file_metadata(${sqlList(job.inputs)})`,
    );
    const rowsPerByte = Number(row?.rows ?? 0) / bytes;
    if (rowsPerByte > 0) maxBytes = sortChunkRows(engine.memoryLimitMb, bytesPerRow) / rowsPerByte;
  }
  return balancedBins(files, Math.max(1, maxBytes)).map((chunk) => ({
    paths: chunk.map((f) => f.path),
    bytes: sum(chunk.map((f) => f.size)),
  }));
}
