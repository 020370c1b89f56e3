/**
 * Readers for the labeled data in `shared/datasets/` (see its README). Only the training and
 * evaluation scripts read these files; nothing from them is shipped except trained weights.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "csv-parse/sync";

/**
 * `shared/datasets` beside the checkout, as on every developer machine and in CI; for a clone made
 * elsewhere from a local checkout (`git clone . /tmp/x`), the one beside the checkout it was cloned
 * from. `SCREEN_DATASETS` (the folder itself) or `LAKESMITH_SHARED` (the `shared/` folder) point
 * anywhere else.
 */
function datasetsFolder(): string {
  if (process.env.SCREEN_DATASETS) return process.env.SCREEN_DATASETS;
  if (process.env.LAKESMITH_SHARED) return join(process.env.LAKESMITH_SHARED, "datasets");
  const repo = join(dirname(fileURLToPath(import.meta.url)), "../../..");
  const beside = join(repo, "../shared/datasets");
  if (existsSync(beside)) return beside;
  try {
    const origin = execFileSync("git", ["-C", repo, "config", "--get", "remote.origin.url"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const path = origin.startsWith("file://") ? new URL(origin).pathname : origin;
    if (isAbsolute(path) && existsSync(join(path, "../shared/datasets")))
      return join(path, "../shared/datasets");
  } catch {
    // Not a clone of a local checkout: the folder beside is the answer, and its absence is reported on read.
  }
  return beside;
}

export const DATASETS = datasetsFolder();

export function readCsv(relative: string): Record<string, string>[] {
  return parse(readFileSync(join(DATASETS, relative)), { columns: true, bom: true, relax_quotes: true });
}

/** Template lines; a template's index is the `template_id` of the records generated from it. */
export function readTemplates(): string[] {
  return readFileSync(join(DATASETS, "pii/presidio_templates.txt"), "utf8")
    .replace(/^\uFEFF/, "")
    .split("\n")
    .map((line) => line.replace(/\r$/, ""));
}

export interface GoldRecord {
  text: string;
  templateId: number;
  masked: string;
  spans: { type: string; start: number; end: number }[];
}

export function readPresidioRecords(): GoldRecord[] {
  const raw = JSON.parse(readFileSync(join(DATASETS, "pii/presidio_synth_dataset_v2.json"), "utf8")) as {
    full_text: string;
    masked: string;
    template_id: number;
    spans: { entity_type: string; start_position: number; end_position: number }[];
  }[];
  return raw.map((r) => ({
    text: r.full_text,
    templateId: r.template_id,
    masked: r.masked,
    spans: r.spans.map((s) => ({ type: s.entity_type, start: s.start_position, end: s.end_position })),
  }));
}

/**
 * The template split, fixed so training and evaluation agree: every fifth template (index 2, 7,
 * 12, ...) is held out for evaluation, and indices 4, 14, 24, ... form a development split used
 * only to tune the decision threshold.
 */
export function templateSplit(index: number): "train" | "dev" | "test" {
  if (index % 5 === 2) return "test";
  if (index % 10 === 4) return "dev";
  return "train";
}

/** The non-empty templates of one split, with their indices (the records' `template_id`). */
export function templatesOf(split: "train" | "dev" | "test"): { index: number; text: string }[] {
  return readTemplates().flatMap((text, index) =>
    text.trim() && templateSplit(index) === split ? [{ index, text }] : [],
  );
}
