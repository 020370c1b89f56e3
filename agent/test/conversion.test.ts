import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import {
  CONVERT_KIND,
  ConversionManifestIndexSchema,
  ConversionManifestSchema,
  type ConvertPayload,
  MANIFEST_FORMAT,
  MANIFEST_KEY,
  MANIFEST_RUNS_FOLDER,
  ManifestRunSchema,
  PREFIX_HARD_DELETE_KIND,
  REMOVE_INPUTS_KIND,
} from "@lakesmith/shared/prefix-conversion";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPrefixHardDelete, runRemoveInputs } from "../src/conversion/remove.ts";
import { runConversion } from "../src/conversion/run.ts";
import { Engine, sqlList } from "../src/engine/duckdb.ts";
import { JobError } from "../src/registry.ts";
import { FileStore, type ObjectStore, readAll, S3Store } from "../src/store/index.ts";
import { type LocalS3, startS3rver } from "./support/local-s3.ts";
import { jobContext } from "./support/maintenance.ts";

const DAY = 86_400_000;
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "conversion-"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A source folder and a target folder on file://, with files aged `ageDays`. */
function lake() {
  const base = mkdtempSync(join(root, "lake-"));
  const sourceDir = join(base, "raw", "events");
  const targetDir = join(base, "curated", "events");
  mkdirSync(sourceDir, { recursive: true });
  mkdirSync(targetDir, { recursive: true });
  const put = (key: string, body: string | Buffer, ageDays = 10) => {
    const file = join(sourceDir, key);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, body);
    const at = new Date(Date.now() - ageDays * DAY);
    utimesSync(file, at, at);
  };
  const payload: ConvertPayload = {
    prefix_id: "pfx_test",
    source_uri: `file://${sourceDir}`,
    target_uri: `file://${targetDir}`,
    target_file_size_mb: 8,
    skip_age_days: 2,
    max_run_bytes: 1024 ** 3,
    policy_version: 1,
  };
  return {
    base,
    sourceDir,
    targetDir,
    put,
    payload,
    source: new FileStore(sourceDir),
    target: new FileStore(targetDir),
  };
}

const ndjson = (rows: object[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

async function convert(
  l: { payload: ConvertPayload; source: ObjectStore; target: ObjectStore },
  steps?: Parameters<typeof runConversion>[1]["steps"],
) {
  const ctx = jobContext(root, CONVERT_KIND, l.payload);
  return {
    jobId: ctx.job.id,
    result: await runConversion(ctx, {
      source: l.source,
      target: l.target,
      memoryLimitMb: 256,
      ...(steps ? { steps } : {}),
    }),
  };
}

async function indexOf(target: ObjectStore) {
  return ConversionManifestIndexSchema.parse(
    JSON.parse((await readAll(await target.read(MANIFEST_KEY))).toString()),
  );
}

/** The manifest with every run whole: the index, each run read from its part. */
async function manifestOf(target: ObjectStore) {
  const index = await indexOf(target);
  const runs = [];
  for (const entry of index.runs)
    runs.push(ManifestRunSchema.parse(JSON.parse((await readAll(await target.read(entry.part))).toString())));
  return { ...index, runs };
}

/** Every row of the outputs the manifest names, as DuckDB reads them, in a stable order. */
async function readBack(targetDir: string, target: ObjectStore): Promise<Record<string, unknown>[]> {
  const manifest = await manifestOf(target);
  const files = manifest.runs.flatMap((r) => r.outputs.map((o) => join(targetDir, o.key)));
  const engine = await Engine.open({ memoryLimitMb: 256 });
  try {
    return await engine.query(
      `select * from read_parquet(${sqlList(files)}, union_by_name = true) order by id`,
    );
  } finally {
    engine.close();
  }
}

describe("prefix_convert on file://", () => {
  it("converts newline-delimited, array and gzip inputs to Parquet that reads back equal", async () => {
    const l = lake();
    l.put(
      "a.jsonl",
      ndjson([
        { id: 1, name: "a", tags: ["x"] },
        { id: 2, name: "b", nested: { k: 1.5 } },
      ]),
    );
    l.put(
      "day=2/b.json",
      JSON.stringify([
        { id: 3, name: null },
        { id: 4, mixed: "text" },
      ]),
    );
    l.put("c.ndjson.gz", gzipSync(ndjson([{ id: 5, mixed: 7, name: "é" }])));
    l.put("notes.txt", "not an input");
    l.put("nested/_lakesmith_manifest.json", '{"format": "another conversion\'s manifest"}');
    const { result, jobId } = await convert(l);
    expect(result).toMatchObject({ files_in: 3, rows: 5, inputs_converted_before: 0, inputs_too_young: 0 });
    expect(result.files_out).toBeGreaterThanOrEqual(1);
    expect(result.bytes_before).toBeGreaterThan(0);
    expect(result.drr).toBeCloseTo(result.bytes_before / result.bytes_after);
    const rows = await readBack(l.targetDir, l.target);
    expect(rows.map((r) => [r.id, r.name])).toEqual([
      ["1", "a"],
      ["2", "b"],
      ["3", null],
      ["4", null],
      ["5", "é"],
    ]);
    // A field that is text in one input and a number in another is widened to JSON, not cast to text.
    expect(rows.map((r) => r.mixed)).toEqual([null, null, null, '"text"', "7"]);
    expect(rows[1]?.nested).toEqual({ k: 1.5 });
    const manifest = await manifestOf(l.target);
    expect(manifest.runs).toHaveLength(1);
    expect(manifest.runs[0]?.job_id).toBe(jobId);
    expect(manifest.runs[0]?.inputs.map((i) => i.key).sort()).toEqual([
      "a.jsonl",
      "c.ndjson.gz",
      "day=2/b.json",
    ]);
    expect(manifest.runs[0]?.outputs.reduce((n, o) => n + o.rows, 0)).toBe(5);
    expect(manifest.runs[0]?.checksum.rows).toBe(5);
  });

  it("converts only the new inputs on the next run, and leaves inputs younger than the skip age", async () => {
    const l = lake();
    l.put("one.jsonl", ndjson([{ id: 1, v: "a" }]));
    l.put("young.jsonl", ndjson([{ id: 9, v: "young" }]), 0);
    const first = await convert(l);
    expect(first.result).toMatchObject({ files_in: 1, rows: 1, inputs_too_young: 1 });
    l.put(
      "two.jsonl",
      ndjson([
        { id: 2, v: "b" },
        { id: 3, v: "c", extra: true },
      ]),
    );
    const second = await convert(l);
    expect(second.result).toMatchObject({
      files_in: 1,
      rows: 2,
      inputs_converted_before: 1,
      inputs_too_young: 1,
    });
    const third = await convert(l);
    expect(third.result).toMatchObject({ files_in: 0, files_out: 0, inputs_converted_before: 2 });
    expect((await readBack(l.targetDir, l.target)).map((r) => r.id)).toEqual(["1", "2", "3"]);
    expect((await manifestOf(l.target)).runs.map((r) => r.inputs.map((i) => i.key))).toEqual([
      ["one.jsonl"],
      ["two.jsonl"],
    ]);
  });

  it("loads the inputs a chunk at a time, one schema for all, proves the rows of every chunk, and joins the chunks' rows into one output file", async () => {
    const l = lake();
    l.put(
      "1.jsonl",
      ndjson([
        { id: 1, a: "x" },
        { id: 2, a: "y" },
      ]),
    );
    l.put("2.jsonl", ndjson([{ id: 3, b: 1.5 }]));
    l.put("3.jsonl", ndjson([{ id: 4, a: "z", b: 2 }]));
    const { result } = await convert(l, { chunkBytes: 1 });
    expect(result).toMatchObject({ files_in: 3, files_out: 1, rows: 4, columns: 3 });
    const rows = await readBack(l.targetDir, l.target);
    expect(rows.map((r) => [r.id, r.a, r.b])).toEqual([
      ["1", "x", null],
      ["2", "y", null],
      ["3", null, 1.5],
      ["4", "z", 2],
    ]);
  });

  it("keeps a key first seen past DuckDB's sample, at the top level and inside a struct", async () => {
    const l = lake();
    const rows = Array.from({ length: 25_000 }, (_, i) => ({ id: i, device: { os: "ios" } }));
    const last = { id: 25_000, late: "here", device: { os: "web", nested_late: 7 } };
    l.put("big.jsonl", `${ndjson(rows)}${JSON.stringify(last)}\n`);
    const { result } = await convert(l);
    expect(result).toMatchObject({ rows: 25_001, columns: 3 });
    const back = await readBack(l.targetDir, l.target);
    expect(back.at(-1)).toEqual({ id: "25000", late: "here", device: { os: "web", nested_late: "7" } });
    expect(back[0]).toEqual({ id: "0", late: null, device: { os: "ios", nested_late: null } });
  });

  it("keeps date and timestamp text as the text it was", async () => {
    const l = lake();
    const stamps = ["2026-01-01T10:00:00Z", "2026-01-01 10:00:00", "2026-01-01T12:00:00.123+02:00"];
    l.put("t.jsonl", ndjson(stamps.map((at, i) => ({ id: i, day: `2026-01-0${i + 1}`, at, when: { at } }))));
    const { jobId } = await convert(l);
    const manifest = await manifestOf(l.target);
    expect(manifest.runs.find((r) => r.job_id === jobId)?.columns).toEqual([
      { name: "id", type: "BIGINT" },
      { name: "day", type: "VARCHAR" },
      { name: "at", type: "VARCHAR" },
      { name: "when", type: 'STRUCT("at" VARCHAR)' },
    ]);
    const back = await readBack(l.targetDir, l.target);
    expect(back.map((r) => [r.day, r.at, (r.when as { at: string }).at])).toEqual(
      stamps.map((at, i) => [`2026-01-0${i + 1}`, at, at]),
    );
  });

  it("keeps integers beyond 64 bits exact: DECIMAL(38,0) where every value is an integer, JSON beside fractions or beyond 38 digits", async () => {
    const l = lake();
    const huge = "123456789012345678901234567890";
    const beyondHugeint = "1234567890123456789012345678901234567890";
    l.put(
      "n.jsonl",
      [
        `{"id": 1, "big": 5, "mixed": 1.5, "wider": 1, "deep": {"v": [0.5]}, "u": -1}`,
        `{"id": 2, "big": ${huge}, "mixed": ${huge}, "wider": ${beyondHugeint}, "deep": {"v": [9007199254740993]}, "u": 18446744073709551615}`,
        `{"id": 3, "big": -${huge}, "mixed": 2, "wider": 3, "deep": {"v": []}, "u": 0}`,
        "",
      ].join("\n"),
    );
    const { jobId } = await convert(l);
    const columns = (await manifestOf(l.target)).runs.find((r) => r.job_id === jobId)?.columns;
    expect(columns).toEqual([
      { name: "id", type: "BIGINT" },
      { name: "big", type: "DECIMAL(38,0)" },
      { name: "mixed", type: "JSON" },
      { name: "wider", type: "JSON" },
      { name: "deep", type: 'STRUCT("v" JSON[])' },
      { name: "u", type: "DECIMAL(38,0)" },
    ]);
    const back = await readBack(l.targetDir, l.target);
    expect(back.map((r) => [r.big, r.mixed, r.wider, (r.deep as { v: string[] }).v, r.u])).toEqual([
      ["5", "1.5", "1", ["0.5"], "-1"],
      [huge, huge, beyondHugeint, ["9007199254740993"], "18446744073709551615"],
      [`-${huge}`, "2", "3", [], "0"],
    ]);
  });

  it("widens a field that is a number for 30,000 records and then text to JSON, each value as written", async () => {
    const l = lake();
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ id: i, n: i }));
    l.put("mixed.jsonl", `${ndjson(rows)}${JSON.stringify({ id: 30_000, n: "not a number" })}\n`);
    await convert(l);
    const back = await readBack(l.targetDir, l.target);
    expect(back.slice(-2).map((r) => r.n)).toEqual(["29999", '"not a number"']);
  });

  it("reads keys that need quoting at any depth, and proves DOUBLE leaves under lists of structs exact", async () => {
    const l = lake();
    l.put(
      "w.jsonl",
      [
        `{"id": 1, "a b": 1, "q\\"x": {"y z": 1.5, "DATE": "2026-01-01"}, "l": [{"k": 1.5}], "m": {"STRUCT(": [[0.5]]}}`,
        `{"id": 2, "a b": 2, "q\\"x": {"y z": 2, "DATE": "x"}, "l": [{"k": 123456789012345678901}], "m": {"STRUCT(": [[9007199254740993]]}}`,
        "",
      ].join("\n"),
    );
    const { jobId } = await convert(l);
    expect((await manifestOf(l.target)).runs.find((r) => r.job_id === jobId)?.columns).toEqual([
      { name: "id", type: "BIGINT" },
      { name: "a b", type: "BIGINT" },
      { name: 'q"x', type: 'STRUCT("y z" DOUBLE, "DATE" VARCHAR)' },
      { name: "l", type: 'STRUCT("k" JSON)[]' },
      { name: "m", type: 'STRUCT("STRUCT(" JSON[][])' },
    ]);
    const back = await readBack(l.targetDir, l.target);
    expect(back.map((r) => [r['q"x'], r.l, r.m])).toEqual([
      [{ "y z": 1.5, DATE: "2026-01-01" }, [{ k: "1.5" }], { "STRUCT(": [["0.5"]] }],
      [{ "y z": 2, DATE: "x" }, [{ k: "123456789012345678901" }], { "STRUCT(": [["9007199254740993"]] }],
    ]);
  });

  it("keeps a fraction that first appears past DuckDB's sample in an integer field (the reader would round it)", async () => {
    const l = lake();
    const rows = Array.from({ length: 25_000 }, (_, i) => ({ id: i, n: i }));
    l.put("late-fraction.jsonl", `${ndjson(rows)}${JSON.stringify({ id: 25_000, n: 1.5 })}\n`);
    await convert(l);
    const back = await readBack(l.targetDir, l.target);
    expect(back.slice(-2).map((r) => r.n)).toEqual([24_999, 1.5]);
  });

  it("fails naming the file and line of a record that cannot be read, and writes nothing", async () => {
    const l = lake();
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ id: i, n: i }));
    l.put("misfit.jsonl", `${ndjson(rows)}{"id": 30000, "n": }\n`);
    const failure = await convert(l).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JobError);
    expect((failure as JobError).retryable).toBe(false);
    expect((failure as Error).message).toContain(`${l.payload.source_uri}/misfit.jsonl`);
    expect((failure as Error).message).toContain("line 30001");
    expect(await l.target.head(MANIFEST_KEY)).toBeUndefined();
    const written: string[] = [];
    for await (const o of l.target.list("")) written.push(o.key);
    expect(written).toEqual([]);
  });

  it("fails the lossless check when the Parquet loses a row, uploading nothing and writing no manifest", async () => {
    const l = lake();
    l.put("a.jsonl", ndjson([{ id: 1 }, { id: 2 }, { id: 3 }]));
    const failure = await convert(l, {
      afterWrite: async (files) => {
        // Rewrite the first output without one of its rows.
        const engine = await Engine.open({ memoryLimitMb: 128 });
        try {
          const file = files[0] as string;
          await engine.run(
            `copy (select * from read_parquet('${file}') where id <> 2) to '${file}.tmp' (format parquet)`,
          );
          await engine.run(`copy (select * from read_parquet('${file}.tmp')) to '${file}' (format parquet)`);
        } finally {
          engine.close();
        }
      },
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JobError);
    expect((failure as Error).message).toMatch(/row count: expected 3, got 2/);
    expect(await l.target.head(MANIFEST_KEY)).toBeUndefined();
    const written: string[] = [];
    for await (const o of l.target.list("")) written.push(o.key);
    expect(written).toEqual([]);
  });

  it("writes each run's part once and a small index entry per run; reads and rewrites a format-1 manifest", async () => {
    const l = lake();
    l.put("a.jsonl", ndjson([{ id: 1 }]));
    const first = await convert(l);
    // The manifest as format 1 wrote it: every run whole in one object, no parts.
    const whole = await manifestOf(l.target);
    const format1 = ConversionManifestSchema.parse({
      format: MANIFEST_FORMAT,
      source_uri: whole.source_uri,
      runs: whole.runs,
    });
    await l.target.write(MANIFEST_KEY, JSON.stringify(format1));
    await l.target.deleteMany([`${MANIFEST_RUNS_FOLDER}${first.jobId}.json`]);
    await l.target.write(`${MANIFEST_RUNS_FOLDER}job_died.json`, "{}");

    l.put("b.jsonl", ndjson([{ id: 2 }]));
    const second = await convert(l);
    expect(second.result).toMatchObject({ files_in: 1, inputs_converted_before: 1, orphans_removed: 1 });
    const index = await indexOf(l.target);
    expect(index.runs.map((r) => [r.job_id, r.part, r.inputs])).toEqual([
      [first.jobId, `${MANIFEST_RUNS_FOLDER}${first.jobId}.json`, 1],
      [second.jobId, `${MANIFEST_RUNS_FOLDER}${second.jobId}.json`, 1],
    ]);
    expect(JSON.stringify(index)).not.toContain("a.jsonl");
    const parts: string[] = [];
    for await (const o of l.target.list(MANIFEST_RUNS_FOLDER)) parts.push(o.key);
    expect(parts.sort()).toEqual(index.runs.map((r) => r.part).sort());
    expect((await manifestOf(l.target)).runs.map((r) => r.inputs.map((i) => i.key))).toEqual([
      ["a.jsonl"],
      ["b.jsonl"],
    ]);
    expect((await readBack(l.targetDir, l.target)).map((r) => r.id)).toEqual(["1", "2"]);
  });

  it("replaces the outputs of a run that died before its manifest instead of keeping both", async () => {
    const l = lake();
    l.put("a.jsonl", ndjson([{ id: 1 }]));
    // What a crash between upload and manifest leaves: an output folder no manifest run names.
    mkdirSync(join(l.targetDir, "data", "job_crashed"), { recursive: true });
    writeFileSync(join(l.targetDir, "data", "job_crashed", "part-00000.parquet"), "partial");
    const { result } = await convert(l);
    expect(result).toMatchObject({ files_in: 1, orphans_removed: 1 });
    const keys: string[] = [];
    for await (const o of l.target.list("data/")) keys.push(o.key);
    expect(keys.every((k) => !k.includes("job_crashed"))).toBe(true);
    expect((await readBack(l.targetDir, l.target)).map((r) => r.id)).toEqual(["1"]);
  });
});

describe("prefix_remove_inputs and prefix_hard_delete", () => {
  it("proposes converted inputs past the retention, minus kept ones, and deletes only what it is given", async () => {
    const l = lake();
    l.put("a.jsonl", ndjson([{ id: 1 }]));
    l.put("b.jsonl", ndjson([{ id: 2 }]));
    await convert(l);
    l.put("c.jsonl", ndjson([{ id: 3 }])); // not converted: never proposed
    const payload = {
      prefix_id: "pfx_test",
      source_uri: l.payload.source_uri,
      target_uri: l.payload.target_uri,
    };
    const none = await runRemoveInputs(
      jobContext(root, REMOVE_INPUTS_KIND, { ...payload, retention_days: 1, keep: [] }),
      {
        source: l.source,
        target: l.target,
      },
    );
    expect(none).toMatchObject({ files: [], within_retention: 2 });
    const later = () => Date.now() + 2 * DAY;
    const proposed = await runRemoveInputs(
      jobContext(root, REMOVE_INPUTS_KIND, { ...payload, retention_days: 1, keep: ["b.jsonl"] }),
      { source: l.source, target: l.target, now: later },
    );
    expect(proposed.files.map((f) => f.path)).toEqual(["a.jsonl"]);
    const deleted = await runPrefixHardDelete(
      jobContext(root, PREFIX_HARD_DELETE_KIND, {
        prefix_id: "pfx_test",
        source_uri: l.payload.source_uri,
        files: [
          { deletion_id: "del_1", path: "a.jsonl" },
          { deletion_id: "del_2", path: "gone.jsonl" },
          { deletion_id: "del_3", path: "../curated/events/_lakesmith_manifest.json" },
        ],
      }),
      { source: l.source },
    );
    expect(deleted.files.map((f) => [f.path, f.outcome])).toEqual([
      ["gone.jsonl", "absent"],
      ["../curated/events/_lakesmith_manifest.json", "failed"],
      ["a.jsonl", "deleted"],
    ]);
    expect(await l.source.head("a.jsonl")).toBeUndefined();
    expect(await l.source.head("b.jsonl")).toBeDefined();
    expect(await l.target.head(MANIFEST_KEY)).toBeDefined();
  });
});

describe("prefix_convert on S3", () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startS3rver();
  });
  afterAll(() => s3.close());

  it("converts a prefix of a bucket into another prefix of it, then only what landed since", async () => {
    const source = new S3Store("lake", "raw/events/", s3.options);
    const target = new S3Store("lake", "curated/events/", s3.options);
    await source.write("a.jsonl", ndjson([{ id: 1, v: "a" }]));
    await source.write("b.json.gz", gzipSync(JSON.stringify([{ id: 2, v: "b" }])));
    const payload: ConvertPayload = {
      prefix_id: "pfx_s3",
      source_uri: "s3://lake/raw/events",
      target_uri: "s3://lake/curated/events",
      target_file_size_mb: 8,
      skip_age_days: 0,
      max_run_bytes: 1024 ** 3,
      policy_version: null,
    };
    const l = { payload, source, target };
    expect((await convert(l)).result).toMatchObject({ files_in: 2, rows: 2 });
    await source.write("c.jsonl", ndjson([{ id: 3, v: "c" }]));
    expect((await convert(l)).result).toMatchObject({ files_in: 1, rows: 1, inputs_converted_before: 2 });
    const manifest = await manifestOf(target);
    expect(manifest.runs.flatMap((r) => r.inputs.map((i) => i.etag !== null))).toEqual([true, true, true]);
    const local = mkdtempSync(join(root, "s3-back-"));
    const files: string[] = [];
    for (const o of manifest.runs.flatMap((r) => r.outputs)) {
      const file = join(local, o.key.replaceAll("/", "_"));
      await target.download(o.key, file);
      files.push(file);
    }
    const engine = await Engine.open({ memoryLimitMb: 128 });
    try {
      expect(await engine.query(`select id, v from read_parquet(${sqlList(files)}) order by id`)).toEqual([
        { id: "1", v: "a" },
        { id: "2", v: "b" },
        { id: "3", v: "c" },
      ]);
    } finally {
      engine.close();
    }
  });
});
