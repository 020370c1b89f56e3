/**
 * The rewrite's orders (engine/layout.ts) on real DuckDB: a Z-order's rows come out in the order of
 * Z-values computed here independently (ranks, scaled keys and interleaved bits in BigInt), over
 * skewed numbers, strings and nulls; a linear layout is the columns' order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeSort, Engine, sortedSelect, zorderBits } from "../src/engine/index.ts";

let engine: Engine;
beforeAll(async () => {
  engine = await Engine.open({ memoryLimitMb: 256 });
});
afterAll(() => engine.close());

type Row = { id: number; a: number | null; b: string | null; c: number };
// 600 rows: `a` skewed (most values small) with nulls, `b` strings with nulls, `c` a few values.
const SOURCE = `select i::integer as id,
    case when i % 17 = 0 then null else floor(pow((hash(i, 1) % 1000) / 1000.0, 4) * 1000)::integer end as a,
    case when i % 23 = 0 then null else 'k-' || (hash(i, 2) % 300)::varchar end as b,
    (hash(i, 3) % 5)::integer as c
  from range(600) t(i)`;

/** Each row's Z-value over `columns`, computed from the rows as the module comment defines it. */
function zValues(rows: Row[], columns: (keyof Row)[]): Map<number, bigint> {
  const bits = zorderBits(columns.length);
  const max = 2 ** bits - 1;
  const n = rows.length;
  const keys = columns.map((col) => {
    const value = (r: Row) => r[col];
    // Nulls last; rank = 1 + rows strictly before (equal values share a rank).
    const cmp = (x: Row, y: Row) => {
      const [vx, vy] = [value(x), value(y)];
      if (vx === null || vy === null) return vx === vy ? 0 : vx === null ? 1 : -1;
      return vx < vy ? -1 : vx > vy ? 1 : 0;
    };
    const key = new Map<number, bigint>();
    for (const r of rows) {
      const before = rows.filter((o) => cmp(o, r) < 0).length;
      key.set(r.id, BigInt(Math.floor((before / (n - 1)) * max)));
    }
    return key;
  });
  const k = columns.length;
  const out = new Map<number, bigint>();
  for (const r of rows) {
    let z = 0n;
    for (let b = 0; b < bits; b++)
      keys.forEach((key, i) => {
        z |= (((key.get(r.id) as bigint) >> BigInt(b)) & 1n) << BigInt(b * k + (k - 1 - i));
      });
    out.set(r.id, z);
  }
  return out;
}

describe("rewrite orders", () => {
  it.each([
    [["a", "b"] as (keyof Row)[]],
    [["b", "a", "c"] as (keyof Row)[]],
    [["c", "a", "b", "id"] as (keyof Row)[]],
  ])("writes rows in Z-value order over %j, with skewed data, strings and nulls", async (columns) => {
    const rows = await engine.query<Row>(
      sortedSelect(SOURCE, { sort_columns: columns, sort_layout: "zorder" }),
    );
    expect(rows.length).toBe(600);
    expect(Object.keys(rows[0] ?? {})).toEqual(["id", "a", "b", "c"]);
    const z = zValues(rows, columns);
    const sequence = rows.map((r) => z.get(r.id) as bigint);
    const descents = sequence.filter((v, i) => i > 0 && v < (sequence[i - 1] as bigint)).length;
    expect(descents).toBe(0);
    // The order is not the input's, nor any one column's.
    expect(rows.map((r) => r.id)).not.toEqual([...rows.map((r) => r.id)].sort((x, y) => x - y));
  });

  it("spreads each column's key over the whole range, so neither column leads", async () => {
    const rows = await engine.query<Row>(
      sortedSelect(SOURCE, { sort_columns: ["a", "b"], sort_layout: "zorder" }),
    );
    // The first quarter of a Z-order holds the lower half of both keys' ranges: about a quarter of
    // the rows are there, not all rows of the lowest `a` values as a linear sort would put there.
    const firstQuarter = rows.slice(0, 150);
    const z = zValues(rows, ["a", "b"]);
    const top = 1n << 63n;
    expect(firstQuarter.every((r) => (z.get(r.id) as bigint) < top)).toBe(true);
    const distinctA = new Set(firstQuarter.map((r) => r.a)).size;
    const distinctB = new Set(firstQuarter.map((r) => r.b)).size;
    expect(distinctA).toBeGreaterThan(1);
    expect(distinctB).toBeGreaterThan(10);
  });

  it("sorts a linear layout by the columns in order, nulls last", async () => {
    const rows = await engine.query<Row>(sortedSelect(SOURCE, { sort_columns: ["c", "a"] }));
    const sorted = [...rows].sort(
      (x, y) => x.c - y.c || (x.a === null ? 1 : y.a === null ? -1 : x.a - y.a) || 0,
    );
    expect(rows.map((r) => [r.c, r.a])).toEqual(sorted.map((r) => [r.c, r.a]));
  });

  it("names the order as tags and reasons show it", () => {
    expect(describeSort({ sort_columns: ["a", "b"], sort_layout: "zorder" })).toBe("zorder(a,b)");
    expect(describeSort({ sort_columns: ["a", "b"] })).toBe("a,b");
    expect(describeSort({ sort_columns: [] })).toBe("none");
    expect(zorderBits(2)).toBe(32);
    expect(zorderBits(3)).toBe(21);
    expect(zorderBits(4)).toBe(16);
  });
});
