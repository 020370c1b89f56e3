import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../src/engine/index.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-duckdb-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("Engine", () => {
  it("gives every open a database of its own, with its settings, also when a spare was readied", async () => {
    const settingsOf = (engine: Engine) =>
      engine.query<{ temp: string; zone: string; tables: string }>(
        `select current_setting('temp_directory') as temp, current_setting('TimeZone') as zone, ` +
          `(select count(*) from duckdb_tables()) as tables`,
      );
    const first = await Engine.open({ memoryLimitMb: 300, tempDir: join(dir, "first") });
    await first.run("create table leftover as select 1 as x");
    first.close(); // readies a spare with these creation settings

    const second = await Engine.open({ memoryLimitMb: 300, tempDir: join(dir, "second") });
    const other = await Engine.open({ memoryLimitMb: 200 });
    try {
      expect(await settingsOf(second)).toEqual([{ temp: join(dir, "second"), zone: "UTC", tables: "0" }]);
      const limit = async (engine: Engine) =>
        (await engine.query<{ limit: string }>(`select current_setting('memory_limit') as limit`))[0]?.limit;
      expect(await limit(second)).toMatch(/^28\d(\.\d)? MiB$/); // 300 MB
      expect(await limit(other)).toMatch(/^19\d(\.\d)? MiB$/); // 200 MB
      expect(second.memoryLimitMb).toBe(300);
    } finally {
      second.close();
      other.close();
    }
  });

  it("sums a value inside the query that passes it (sumTap): every row kept, each tap its own", async () => {
    const engine = await Engine.open({ threads: 2 });
    try {
      const hashes = await engine.sumTap();
      const other = await engine.sumTap();
      const [row] = await engine.query<{ n: string; sum: string }>(
        `select count(*)::varchar as n, sum(hash(i))::varchar as sum from range(100000) t(i) where ${hashes.call("hash(i)")}`,
      );
      expect(row).toEqual({ n: "100000", sum: hashes.sum.toString() });
      expect(hashes.rows).toBe(100_000);
      expect(hashes.sum > 2n ** 64n).toBe(true); // summed exactly past 64 bits
      expect([other.rows, other.sum]).toEqual([0, 0n]);

      const kept = await engine.query<{ n: string }>(
        `select count(*)::varchar as n from range(10) t(i) where ${other.call("case when i % 2 = 0 then null else i::ubigint end")}`,
      );
      expect(kept).toEqual([{ n: "10" }]);
      expect([other.rows, other.sum]).toEqual([10, 25n]); // nulls seen, not summed
    } finally {
      engine.close();
    }
  });
});
