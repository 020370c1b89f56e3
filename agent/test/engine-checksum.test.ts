import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkSchema,
  checksumFiles,
  compareChecksums,
  Engine,
  explainMismatch,
  sqlString,
  sumChecksums,
  type TableColumn,
} from "../src/engine/index.ts";

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-checksum-"));
  engine = await Engine.open({ memoryLimitMb: 256 });
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

const columns: TableColumn[] = [
  { name: "id", type: "INTEGER" },
  { name: "a", type: "VARCHAR" },
  { name: "b", type: "VARCHAR" },
  { name: "s", type: "STRUCT(x INTEGER, y VARCHAR)" },
];

const base = `select i::int as id, 'a' || (i % 7) as a, 'b' || (i % 5) as b, {'x': i::int, 'y': 'y' || i} as s
  from range(1000) t(i)`;

/** Writes the rows of `sql` into `parts` files, split by `id % parts`. */
async function files(name: string, sql: string, parts = 1): Promise<string[]> {
  const folder = join(dir, name);
  await mkdir(folder, { recursive: true });
  const paths: string[] = [];
  for (let p = 0; p < parts; p++) {
    const path = join(folder, `${p}.parquet`);
    await engine.run(
      `copy (select * from (${sql}) where id % ${parts} = ${p}) to ${sqlString(path)} (format parquet)`,
    );
    paths.push(path);
  }
  return paths;
}

async function differences(name: string, sql: string): Promise<string[]> {
  const expected = await checksumFiles(engine, await files("base", base), columns);
  const actual = await checksumFiles(engine, await files(name, sql), columns);
  const problems = compareChecksums(expected, actual);
  if (problems.length === 0) return problems;
  return explainMismatch(engine, await files("base", base), await files(name, sql), columns);
}

describe("content checksum", () => {
  it("does not change with row order or how rows are split into files", async () => {
    const expected = await checksumFiles(engine, await files("base", base), columns);
    const reordered = await checksumFiles(
      engine,
      await files("reordered", `${base} order by a desc, id desc`, 3),
      columns,
    );
    expect(expected.rows).toBe(1000);
    expect(compareChecksums(expected, reordered)).toEqual([]);
  });

  it("adds up the checksums of disjoint sets of files to the checksum of all of them", async () => {
    const parts = await files("parts", base, 3);
    const whole = await checksumFiles(engine, parts, columns, { perColumn: true });
    const each = await Promise.all(
      parts.map((p) => checksumFiles(engine, [p], columns, { perColumn: true })),
    );
    expect(sumChecksums(columns, each)).toEqual(whole);
    // One part short is a difference, as a dropped file must be.
    expect(compareChecksums(whole, sumChecksums(columns, each.slice(1)))).not.toEqual([]);
  });

  it("detects a changed value with the row checksum alone, without per-column hashes", async () => {
    const expected = await checksumFiles(engine, await files("base", base), columns);
    const changed = `select id, case when id = 7 then 'b9' else b end as b, a, s from (${base})`;
    const actual = await checksumFiles(
      engine,
      await files("changed-b", `select id, a, b, s from (${changed})`),
      columns,
    );
    expect(expected.columns.every((c) => c.hash === undefined)).toBe(true);
    expect(compareChecksums(expected, actual)).toEqual([
      expect.stringMatching(/^rows differ \(row checksum/),
    ]);
  });

  it("names the column whose value changed once asked to explain a mismatch", async () => {
    const changed = `select id, a, b, case when id = 500 then {'x': 0::int, 'y': 'y500'} else s end as s from (${base})`;
    expect(await differences("changed", changed)).toEqual([
      expect.stringMatching(/^column s: values differ/),
    ]);
  });

  it("reports a dropped row and a duplicated row", async () => {
    expect(await differences("dropped", `select * from (${base}) where id <> 17`)).toContain(
      "row count: expected 1000, got 999",
    );
    const duplicated = await differences(
      "duplicated",
      `select * from (${base}) union all select * from (${base}) where id = 3`,
    );
    expect(duplicated[0]).toBe("row count: expected 1000, got 1001");
    expect(duplicated).toContain("column id: expected 1000 non-null values, got 1001");
  });

  it("reports values swapped between two columns and values moved between rows", async () => {
    const swapped = `select id, case when id = 9 then b else a end as a, case when id = 9 then a else b end as b, s from (${base})`;
    const problems = await differences("swapped", swapped);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^column a: values differ/);
    expect(problems[1]).toMatch(/^column b: values differ/);
    // Rows 0 and 1 exchange their `a`: every column still holds the same multiset of values.
    const moved = `select id, case id when 0 then 'a1' when 1 then 'a0' else a end as a, b, s from (${base})`;
    expect(await differences("moved", moved)).toEqual([
      "rows differ: every column holds the same values, but not in the same rows",
    ]);
  });

  it("tells a NULL from a missing value and names a schema mismatch", async () => {
    const nulled = `select id, case when id = 4 then NULL else a end as a, b, s from (${base})`;
    expect(await differences("nulled", nulled)).toEqual(["column a: expected 1000 non-null values, got 999"]);
    const expected = await checksumFiles(engine, await files("base", base), columns);
    const fewer = await checksumFiles(engine, await files("base", base), columns.slice(0, 3));
    expect(compareChecksums(expected, fewer)).toEqual([
      "schema mismatch: expected columns [id, a, b, s], got [id, a, b]",
    ]);
  });
});

describe("checkSchema", () => {
  it("accepts files whose Parquet schema reads back as the columns and names the file that differs", async () => {
    const good = await files("schema-good", base);
    expect(await checkSchema(engine, good, columns)).toEqual([]);
    const bad = await files("schema-bad", `select id::bigint as id, a, b, s from (${base})`);
    expect(await checkSchema(engine, bad, columns)).toEqual([
      expect.stringContaining(`schema mismatch in ${bad[0]}: expected [id INTEGER, a VARCHAR`),
    ]);
  });
});
