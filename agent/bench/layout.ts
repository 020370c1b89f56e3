/**
 * What a layout costs the rewrite: the same rows written unsorted, sorted linearly, and Z-ordered
 * (`engine/layout.ts`), each as one file and as several files in the sort's order (a sorted chunk
 * copied out in slices, `engine/rewrite.ts`), with the crunch's own `rewriteFiles` (output checksum
 * included). Rounds take turns between the layouts, so load on the machine weighs on all alike;
 * medians of CPU and wall time are printed with the bytes written. The files' skipping is measured
 * by agent/test/crunch-zorder.test.ts, not here.
 *
 * Usage: npx tsx agent/bench/layout.ts [--rows 2000000] [--files 8] [--repeat 3]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { CrunchSettings } from "@lakesmith/shared/jobs";
import { Engine, PLAIN_SETTINGS, rewriteFiles, sqlString, type TableColumn } from "../src/engine/index.ts";

const { values: args } = parseArgs({
  options: {
    rows: { type: "string", default: "2000000" },
    files: { type: "string", default: "8" },
    repeat: { type: "string", default: "3" },
  },
});
const ROWS = Number(args.rows);
const FILES = Number(args.files);
const REPEAT = Number(args.repeat);

const COLUMNS: TableColumn[] = [
  { name: "id", type: "BIGINT" },
  { name: "a", type: "INTEGER" },
  { name: "b", type: "VARCHAR" },
  { name: "payload", type: "VARCHAR" },
];
type Sort = Pick<CrunchSettings, "sort_columns" | "sort_layout">;
const CASES: { name: string; sort: Sort; files: number }[] = [
  { name: "unsorted", sort: { sort_columns: [] }, files: 1 },
  { name: "linear(a), 1 file", sort: { sort_columns: ["a"] }, files: 1 },
  { name: `linear(a), ${FILES} files`, sort: { sort_columns: ["a"] }, files: FILES },
  { name: "zorder(a,b), 1 file", sort: { sort_columns: ["a", "b"], sort_layout: "zorder" }, files: 1 },
  {
    name: `zorder(a,b), ${FILES} files`,
    sort: { sort_columns: ["a", "b"], sort_layout: "zorder" },
    files: FILES,
  },
];

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;

const dir = mkdtempSync(join(tmpdir(), "bench-layout-"));
const engine = await Engine.open({ memoryLimitMb: 2048, tempDir: join(dir, "spill") });
try {
  const input = join(dir, "in.parquet");
  await engine.run(
    `copy (select i::bigint as id, (hash(i, 1) % 1000000)::integer as a,
             'b-' || lpad((hash(i, 2) % 1000000)::varchar, 6, '0') as b, md5(i::varchar) as payload
           from range(${ROWS}) t(i)) to ${sqlString(input)} (format parquet, compression snappy)`,
  );
  const runs = new Map(CASES.map((c) => [c.name, { cpu: [] as number[], wall: [] as number[], bytes: 0 }]));
  for (let round = 0; round < REPEAT; round++)
    for (const c of CASES) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      const out = await rewriteFiles(engine, {
        inputs: [input],
        columns: COLUMNS,
        outDir: join(dir, `out-${round}-${CASES.indexOf(c)}`),
        namePrefix: "part",
        settings: { ...PLAIN_SETTINGS, ...c.sort },
        targetFileBytes: 2 ** 40,
        sortedFiles: c.files,
      });
      const used = process.cpuUsage(cpu);
      const run = runs.get(c.name);
      if (!run) throw new Error(c.name);
      run.cpu.push((used.user + used.system) / 1000);
      run.wall.push(performance.now() - started);
      run.bytes = out.files.reduce((n, f) => n + f.bytes, 0);
    }
  console.log(`${ROWS} rows, medians of ${REPEAT} rounds (CPU includes DuckDB's threads):`);
  const unsorted = median(runs.get("unsorted")?.cpu ?? []);
  for (const [name, r] of runs)
    console.log(
      `  ${name.padEnd(22)} CPU ${(median(r.cpu) / 1000).toFixed(2)} s (${(median(r.cpu) / unsorted).toFixed(2)}x unsorted), ` +
        `wall ${(median(r.wall) / 1000).toFixed(2)} s, ${(r.bytes / 2 ** 20).toFixed(1)} MB`,
    );
} finally {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
}
