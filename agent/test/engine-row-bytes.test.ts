import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, estimateRowBytes, sqlString, type TableColumn, typeWidth } from "../src/engine/index.ts";

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-row-bytes-"));
  engine = await Engine.open({ memoryLimitMb: 256 });
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

describe("typeWidth", () => {
  it("gives DuckDB's vector widths of flat types, decimals by precision, and none for nested types", () => {
    expect(typeWidth("BIGINT")).toBe(8);
    expect(typeWidth("timestamp with time zone")).toBe(8);
    expect(typeWidth("TIMESTAMPTZ")).toBe(8);
    expect(typeWidth("DATE")).toBe(4);
    expect(typeWidth("DECIMAL(4,1)")).toBe(2);
    expect(typeWidth("DECIMAL(12,2)")).toBe(8);
    expect(typeWidth("DECIMAL(38, 10)")).toBe(16);
    expect(typeWidth("VARCHAR")).toBe("string");
    expect(typeWidth("BLOB")).toBe("string");
    expect(typeWidth("INTEGER[]")).toBeNull();
    expect(typeWidth("STRUCT(a INTEGER)")).toBeNull();
    expect(typeWidth("MAP(VARCHAR, INTEGER)")).toBeNull();
  });
});

describe("estimateRowBytes", () => {
  it("adds the widths and the average length of strings longer than DuckDB keeps inline", async () => {
    const file = join(dir, "flat.parquet");
    // Half the names are 20 bytes (kept in the heap), half 5 bytes (inline); codes are all inline.
    await engine.run(
      `copy (select i::bigint as id, if(i % 2 = 0, repeat('x', 20), 'short') as name, 'ab' as code, ` +
        `(i / 100)::decimal(12,2) as amount from range(4096) t(i)) to ${sqlString(file)} (format parquet)`,
    );
    const columns: TableColumn[] = [
      { name: "id", type: "BIGINT" },
      { name: "name", type: "VARCHAR" },
      { name: "code", type: "VARCHAR" },
      { name: "amount", type: "DECIMAL(12,2)" },
    ];
    expect(await estimateRowBytes(engine, [file], columns)).toBe(8 + 16 + 10 + 16 + 8);
  });

  it("answers null for a nested column, so the caller measures instead", async () => {
    const file = join(dir, "nested.parquet");
    await engine.run(`copy (select [1, 2] as xs) to ${sqlString(file)} (format parquet)`);
    expect(await estimateRowBytes(engine, [file], [{ name: "xs", type: "INTEGER[]" }])).toBeNull();
  });
});
