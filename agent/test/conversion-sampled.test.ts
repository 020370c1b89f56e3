/**
 * The sampled conversion (`conversion/sampled.ts`): inputs whose sample's schema holds every record
 * are converted in one copy; every cast the typed JSON reader would make past its sample sends the
 * conversion to the every-record path, which keeps the value. Real DuckDB, real files.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConvertSteps, convertJson } from "../src/conversion/convert.ts";
import { Engine, sqlList } from "../src/engine/duckdb.ts";
import { JobError } from "../src/registry.ts";

let root: string;
let engine: Engine;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "conversion-sampled-"));
  engine = await Engine.open({ memoryLimitMb: 256, tempDir: join(root, "duckdb") });
});
afterAll(() => {
  engine.close();
  rmSync(root, { recursive: true, force: true });
});

/** DuckDB samples 20,480 records: this many come first, so what follows is past the sample. */
const PAST_SAMPLE = 25_000;
let run = 0;

/** Converts files of newline-delimited JSON lines; the outputs' rows as DuckDB reads them, in input order. */
async function convert(files: string[][], steps?: ConvertSteps) {
  const dir = join(root, `run-${++run}`);
  const inputs = files.map((lines, i) => {
    const path = join(root, `in-${run}-${i}.jsonl`);
    writeFileSync(path, `${lines.join("\n")}\n`);
    return { path, uri: `file:///lake/${i}.jsonl`, size: statSync(path).size };
  });
  const converted = await convertJson(engine, inputs, join(dir, "out"), 8, steps);
  const rows = await engine.query(
    `select * from read_parquet(${sqlList(converted.files.map((f) => f.path))}) order by id`,
  );
  return { ...converted, rows, types: Object.fromEntries(converted.columns.map((c) => [c.name, c.type])) };
}

const many = (record: (i: number) => object) =>
  Array.from({ length: PAST_SAMPLE }, (_, i) => JSON.stringify(record(i)));

describe("the sampled conversion", () => {
  it("converts inputs its sample describes in one copy, every value as parsed", async () => {
    const text = ["plain", 'quote " and \\ back', "line\nbreak", "é ü 日本", "{not an object}", "5", ""];
    const lines = text.map((t, i) =>
      JSON.stringify({
        id: i,
        t,
        n: i % 2 === 0 ? 100 : 1.5, // integers and fractions in one DOUBLE field
        b: i % 3 === 0,
        s: { os: t, v: i, l: [{ k: i / 4 }] },
        tags: [t, null],
      }),
    );
    lines.push(JSON.stringify({ id: 7 }), JSON.stringify({ id: 8, n: -0.25, s: null, tags: [] }));
    const { path, rows, types, checksum, files } = await convert([lines.slice(0, 4), lines.slice(4)]);
    expect(path).toBe("sampled");
    expect(checksum.rows).toBe(9);
    expect(files.reduce((n, f) => n + f.rows, 0)).toBe(9);
    expect(types).toMatchObject({ id: "BIGINT", t: "VARCHAR", n: "DOUBLE", b: "BOOLEAN" });
    expect(rows.slice(0, 7).map((r) => r.t)).toEqual(text);
    expect(rows.map((r) => r.n)).toEqual([100, 1.5, 100, 1.5, 100, 1.5, 100, null, -0.25]);
    expect(rows[5]?.s).toEqual({ os: "5", v: "5", l: [{ k: 1.25 }] });
    expect(rows[8]).toMatchObject({ s: null, tags: [] });
  });

  it("converts keys that need quoting, at any depth, on the sampled path", async () => {
    const lines = [
      `{"id": 1, "a b": 1, "q\\"x": {"y z": 1.5, "it's": ["x"]}, "l": [{"k'": 2.5}]}`,
      `{"id": 2, "a b": 2, "q\\"x": {"y z": 2, "it's": []}, "l": [{"k'": 3}]}`,
    ];
    const { path, rows } = await convert([lines]);
    expect(path).toBe("sampled");
    expect(rows.map((r) => [r["a b"], r['q"x'], r.l])).toEqual([
      ["1", { "y z": 1.5, "it's": ["x"] }, [{ "k'": 2.5 }]],
      ["2", { "y z": 2, "it's": [] }, [{ "k'": 3 }]],
    ]);
  });

  it.each([
    ["a fraction in an integer field", { n: 1 }, "1.5", "DOUBLE", 1.5],
    ["a number in a text field", { n: "x" }, "5", "JSON", "5"],
    ["text in an integer field", { n: 1 }, '"5"', "JSON", '"5"'],
    ["text in a fraction field", { n: 0.5 }, '"1.5"', "JSON", '"1.5"'],
    ["a number in a boolean field", { n: true }, "1", "JSON", "1"],
    ["text in a boolean field", { n: true }, '"true"', "JSON", '"true"'],
    ["an object in a text field", { n: "x" }, '{"a": 1}', "JSON", '{"a":1}'],
    ["an exponent in an integer field (a double to every JSON parser)", { n: 1 }, "1e3", "DOUBLE", 1000],
    ["a boolean in an integer field", { n: 1 }, "true", "JSON", "true"],
    ["a boolean in a fraction field", { n: 0.5 }, "false", "JSON", "false"],
    ["a list in a text field", { n: "x" }, "[1, 2]", "JSON", "[1,2]"],
    [
      "an integer a double does not hold in a fraction field",
      { n: 0.5 },
      "9007199254740993",
      "JSON",
      "9007199254740993",
    ],
  ])("keeps %s past the sample: the every-record path widens it", async (_, before, late, type, kept) => {
    const lines = [...many((i) => ({ id: i, ...before })), `{"id": ${PAST_SAMPLE}, "n": ${late}}`];
    const { path, rows, types, stepMs } = await convert([lines]);
    expect(path).toBe("every record");
    expect(stepMs.sampled_attempt).toBeGreaterThan(0);
    expect(types.n).toBe(type);
    expect(rows.at(-1)?.n).toEqual(kept);
  });

  it("stays on the sampled path for numbers of a fraction field's kind past the sample: exponents, and the largest integers a double holds", async () => {
    const lines = [
      ...many((i) => ({ id: i, n: i + 0.5, l: [{ v: 0.25 }] })),
      `{"id": ${PAST_SAMPLE}, "n": 1E2, "l": [{"v": -2.5e-3}]}`,
      `{"id": ${PAST_SAMPLE + 1}, "n": 9007199254740992, "l": [{"v": -9007199254740992}]}`,
    ];
    const { path, rows, types } = await convert([lines]);
    expect(path).toBe("sampled");
    expect(types).toMatchObject({ n: "DOUBLE", l: 'STRUCT("v" DOUBLE)[]' });
    expect(rows.slice(-2).map((r) => [r.n, r.l])).toEqual([
      [100, [{ v: -0.0025 }]],
      [9007199254740992, [{ v: -9007199254740992 }]],
    ]);
  });

  it("keeps a key first seen past the sample, at the top level and in a struct, through the every-record path", async () => {
    const lines = many((i) => ({ id: i, s: { a: i } }));
    lines.push(JSON.stringify({ id: PAST_SAMPLE, late: "x", s: { a: 1, b: "y" } }));
    const { path, rows, types } = await convert([lines]);
    expect(path).toBe("every record");
    expect(types).toMatchObject({ late: "VARCHAR", s: 'STRUCT("a" BIGINT, "b" VARCHAR)' });
    expect(rows.at(-1)).toMatchObject({ late: "x", s: { a: "1", b: "y" } });
  });

  it("types a field null throughout the sample from every record, not as the sample's JSON", async () => {
    const lines = [
      ...many((i) => ({ id: i, n: null, mixed: i % 2 ? 1 : "x" })),
      `{"id": ${PAST_SAMPLE}, "n": 5}`,
    ];
    const { path, rows, types } = await convert([lines]);
    expect(path).toBe("every record");
    expect(types).toMatchObject({ n: "BIGINT", mixed: "JSON" });
    expect(rows.at(-1)?.n).toBe("5");
  });

  it("takes the every-record path for integers beyond 64 bits (a double would round them)", async () => {
    const huge = "123456789012345678901234567890";
    const { path, rows, types } = await convert([[`{"id": 1, "n": ${huge}}`, `{"id": 2, "n": 3}`]]);
    expect(path).toBe("every record");
    expect(types.n).toBe("DECIMAL(38,0)");
    expect(rows.map((r) => r.n)).toEqual([huge, "3"]);
  });

  it("fails, and does not retry, when the written Parquet lost a row", async () => {
    const failure = await convert([[`{"id": 1}`, `{"id": 2}`, `{"id": 3}`]], {
      afterWrite: rewriteFirst((parquet) => `select * from ${parquet} where id <> 2`),
    }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(JobError);
    expect((failure as Error).message).toMatch(/row count: expected 3, got 2/);
  });

  it("fails, and does not retry, when a written value changed to another of its kind", async () => {
    // Same rows, same kinds, same non-null counts: only the copy's row hash against the files' sees it.
    const records = [1, 2, 3].map((id) => JSON.stringify({ id, t: `text ${id}`, n: id * 10 }));
    for (const change of [
      `id, case when id = 2 then 'text 3' else t end as t, n`,
      `id, t, n + (id = 3)::int as n`,
    ]) {
      const failure = await convert([records], {
        afterWrite: rewriteFirst((parquet) => `select ${change} from ${parquet}`),
      }).catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(JobError);
      expect((failure as Error).message).toMatch(/rows differ \(row checksum \d+ ≠ \d+\)/);
    }
    expect((await convert([records])).path).toBe("sampled"); // unchanged, the same inputs convert
  });
});

/** An `afterWrite` that rewrites the first written file as `select` over it: a writer that lost or changed something. */
function rewriteFirst(select: (parquet: string) => string) {
  return async (files: string[]) => {
    const file = files[0] as string;
    await engine.run(`copy (${select(`read_parquet('${file}')`)}) to '${file}.tmp' (format parquet)`);
    await engine.run(`copy (select * from read_parquet('${file}.tmp')) to '${file}' (format parquet)`);
  };
}
