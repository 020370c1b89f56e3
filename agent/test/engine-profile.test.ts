import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, profileColumns, sqlString } from "../src/engine/index.ts";

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "engine-profile-"));
  engine = await Engine.open({ memoryLimitMb: 256 });
});
afterAll(async () => {
  engine.close();
  await rm(dir, { recursive: true, force: true });
});

describe("profileColumns", () => {
  it("profiles each column on a bounded sample: distinct count, null fraction, min, max and type", async () => {
    const path = join(dir, "sample.parquet");
    await engine.run(`copy (select i::bigint as order_id, ['a','b','c'][1 + (i % 3)::int] as status,
        case when i % 4 = 0 then NULL else date '2024-01-01' + (i % 10)::int end as day, [i] as tags
      from range(50000) t(i)) to ${sqlString(path)} (format parquet)`);
    const profiles = await profileColumns(
      engine,
      [path],
      [
        { name: "order_id", type: "BIGINT" },
        { name: "status", type: "VARCHAR" },
        { name: "day", type: "DATE" },
        { name: "tags", type: "BIGINT[]" },
      ],
      { sampleRows: 10_000 },
    );
    const [orderId, status, day, tags] = profiles;
    expect(orderId).toMatchObject({
      type: "BIGINT",
      sampleRows: 10_000,
      nullFraction: 0,
      min: "0",
      max: "9999",
    });
    expect(orderId?.approxDistinct).toBeGreaterThan(8_000);
    expect(status).toMatchObject({ approxDistinct: 3, min: "a", max: "c" });
    expect(day).toMatchObject({ min: "2024-01-01", max: "2024-01-10" });
    expect(day?.nullFraction).toBeCloseTo(0.25, 2);
    expect(tags).toMatchObject({ type: "BIGINT[]", min: null, max: null });
  });
});
