/**
 * Micro benchmark of crunch's data engine against a plain DuckDB rewrite of the same files.
 *
 * Datasets: a generated bin of ≥ 400 small snappy files of order events (timestamps in arrival order,
 * low-cardinality strings, skewed ids, decimals; deterministic, built with DuckDB from `hash()`), and
 * a copy of the COVID-19_NYT fixture. For each: the plain rewrite
 * (`COPY (select * from read_parquet(files)) TO … (FORMAT parquet, COMPRESSION zstd)`) and crunch's
 * pipeline (tune on a sample, rewrite, checksum of inputs, compare with the outputs' checksum, schema
 * check; statistics come with the rewrite), repeated, medians printed. Throughput is input MB per
 * second; DRR is the percentage of input bytes saved.
 *
 * Usage: npm run bench:engine -w agent -- [--files 400] [--rows 20000] [--repeat 3] [--dir /tmp/x]
 * Without --dir it works in a fresh temporary folder and removes it at the end (also on an error
 * or Ctrl-C); with --dir the folder is kept, and its generated files are reused by the next run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cp, mkdir, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  checkSchema,
  checksumFiles,
  compareChecksums,
  Engine,
  profileColumns,
  rewriteFiles,
  sqlList,
  sqlString,
  type TableColumn,
  tuneSettings,
} from "../src/engine/index.ts";
import { columnFacts, inferRecipe } from "../src/inspect/recipe.ts";

const { values: args } = parseArgs({
  options: {
    files: { type: "string", default: "400" },
    rows: { type: "string", default: "20000" },
    repeat: { type: "string", default: "3" },
    dir: { type: "string" },
    // The agent's default memory limit.
    "memory-mb": { type: "string", default: "768" },
  },
});
const FIXTURE = new URL("../../../shared/fixtures/delta/COVID-19_NYT/", import.meta.url).pathname;

async function generateEvents(engine: Engine, folder: string, files: number, rows: number): Promise<void> {
  if ((await readdir(folder).catch(() => [])).length === files) return;
  await rm(folder, { recursive: true, force: true });
  await mkdir(folder, { recursive: true });
  for (let f = 0; f < files; f++) {
    // Events arrive in time order, a few seconds apart; customers and SKUs are skewed (cubed uniform).
    await engine.run(`copy (select
        timestamptz '2024-03-01 00:00:00+00' + to_microseconds(i * 3_000_000 + (hash(i, 1) % 2_000_000)::bigint) as event_time,
        'ord-' || lpad(i::varchar, 10, '0') as order_id,
        (pow((hash(i, 3) % 1_000_000) / 1e6, 3) * 50_000)::bigint as customer_id,
        ['US','US','US','DE','FR','GB','IN','BR','JP','CA'][1 + (hash(i, 4) % 10)::int] as country,
        ['created','paid','paid','shipped','delivered','cancelled'][1 + (hash(i, 5) % 6)::int] as status,
        ['web','ios','android'][1 + (hash(i, 6) % 3)::int] as channel,
        sku,
        (1 + hash(i, 8) % 4)::integer as quantity,
        ((1 + hash(i, 8) % 4) * (5 + (sku_n * 37) % 200) * 0.99)::decimal(12,2) as amount,
        case when hash(i, 9) % 10 = 0 then null else (20 + hash(i, 11) % 400)::integer end as latency_ms
      from (select i, (pow((hash(i, 10) % 1_000_000) / 1e6, 3) * 2_000)::int as sku_n,
                   'sku-' || lpad(((pow((hash(i, 10) % 1_000_000) / 1e6, 3) * 2_000)::int)::varchar, 5, '0') as sku
            from range(${f * rows}, ${(f + 1) * rows}) t(i)))
      to ${sqlString(join(folder, `part-${String(f).padStart(5, "0")}.snappy.parquet`))}
      (format parquet, compression snappy, row_group_size ${Math.min(rows, 10_000)})`);
  }
}

async function parquetFiles(folder: string): Promise<{ files: string[]; bytes: number }> {
  const files = (await readdir(folder)).filter((f) => f.endsWith(".parquet")).map((f) => join(folder, f));
  let bytes = 0;
  for (const f of files) bytes += (await stat(f)).size;
  return { files, bytes };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function bench(engine: Engine, name: string, folder: string, scratch: string, repeat: number) {
  const { files, bytes } = await parquetFiles(folder);
  await mkdir(scratch, { recursive: true });
  const described = await engine.query<{ column_name: string; column_type: string }>(
    `describe select * from read_parquet(${sqlList(files)})`,
  );
  const columns: TableColumn[] = described.map((d) => ({ name: d.column_name, type: d.column_type }));
  // As onboarding does: the recipe's cluster columns come from a profile of a sample.
  const profiles = await profileColumns(engine, files, columns);
  const clusterColumns = inferRecipe(
    [],
    columnFacts(profiles, (name) => deltaTypeOf(columns, name)),
  ).cluster_columns;
  const phases: Record<string, number[]> = {};
  const phase = async <T>(name: string, body: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const result = await body();
    phases[name] = [...(phases[name] ?? []), performance.now() - t0];
    return result;
  };
  const plainTimes: number[] = [];
  const crunchTimes: number[] = [];
  const tuneTimes: number[] = [];
  let plainBytes = 0;
  let crunchBytes = 0;
  let reason = "";
  for (let r = 0; r < repeat; r++) {
    const plainDir = join(scratch, "plain");
    await rm(plainDir, { recursive: true, force: true });
    let t = performance.now();
    await engine.run(
      `copy (select * from read_parquet(${sqlList(files)})) to ${sqlString(plainDir)} (format parquet, compression zstd, file_size_bytes '128MB')`,
    );
    plainTimes.push(performance.now() - t);
    plainBytes = (await parquetFiles(plainDir)).bytes;

    t = performance.now();
    const settings = await tuneSettings(engine, {
      inputs: files,
      columns,
      clusterColumns,
      scratchDir: join(scratch, "tune"),
    });
    tuneTimes.push(performance.now() - t);
    reason = settings.reason;
    const outDir = join(scratch, "crunch");
    await rm(outDir, { recursive: true, force: true });
    t = performance.now();
    // The order crunch/run.ts uses: checksum of the inputs, rewrite (with the outputs' scan), compare.
    const expected = await phase("checksum inputs", () => checksumFiles(engine, files, columns));
    const written = await phase("rewrite+describe", () =>
      rewriteFiles(engine, {
        inputs: files,
        columns,
        outDir,
        namePrefix: `part-${r}`,
        settings,
        targetFileBytes: 128 * 2 ** 20,
      }),
    );
    const problems = await phase("compare+schema", async () => [
      ...compareChecksums(expected, written.checksum),
      ...(await checkSchema(
        engine,
        written.files.map((f) => f.path),
        columns,
      )),
    ]);
    crunchTimes.push(performance.now() - t);
    if (problems.length > 0) throw new Error(`${name}: rewrite not lossless: ${problems.join("; ")}`);
    crunchBytes = written.files.reduce((s, f) => s + f.bytes, 0);
  }
  const mb = bytes / 1e6;
  const plainMbs = mb / (median(plainTimes) / 1000);
  const crunchMbs = mb / (median(crunchTimes) / 1000);
  const withTuneMbs = mb / ((median(crunchTimes) + median(tuneTimes)) / 1000);
  const drr = (out: number) => 100 * (1 - out / bytes);
  console.log(`\n${name}: ${files.length} files, ${mb.toFixed(1)} MB in`);
  console.log(`  plain zstd COPY           ${plainMbs.toFixed(1)} MB/s   DRR ${drr(plainBytes).toFixed(1)}%`);
  console.log(
    `  crunch rewrite+validate   ${crunchMbs.toFixed(1)} MB/s   DRR ${drr(crunchBytes).toFixed(1)}%   ratio ${(crunchMbs / plainMbs).toFixed(2)}`,
  );
  console.log(
    `  … with tuning             ${withTuneMbs.toFixed(1)} MB/s   ratio ${(withTuneMbs / plainMbs).toFixed(2)}`,
  );
  console.log(`  DRR gain ${(drr(crunchBytes) - drr(plainBytes)).toFixed(1)} points; settings: ${reason}`);
  console.log(
    `  phases (median ms): ${Object.entries(phases)
      .map(([k, v]) => `${k} ${Math.round(median(v))}`)
      .join(" | ")}; cluster columns [${clusterColumns.join(", ")}]`,
  );
  console.log(
    `  runs (ms): plain ${plainTimes.map(Math.round).join(" ")} | crunch ${crunchTimes.map(Math.round).join(" ")} | tune ${tuneTimes.map(Math.round).join(" ")}`,
  );
}

const own = args.dir ? undefined : mkdtempSync(join(tmpdir(), "lakesmith-bench-engine-"));
const root = args.dir ?? (own as string);
const removeOwn = () => {
  if (own) rmSync(own, { recursive: true, force: true });
};
process.on("exit", removeOwn);
process.once("SIGINT", () => process.exit(130));
process.once("SIGTERM", () => process.exit(143));
const engine = await Engine.open({ memoryLimitMb: Number(args["memory-mb"]), tempDir: join(root, "spill") });
try {
  const events = join(root, "events");
  await generateEvents(engine, events, Number(args.files), Number(args.rows));
  const covid = join(root, "covid");
  await rm(covid, { recursive: true, force: true });
  await cp(FIXTURE, covid, { recursive: true, filter: (src) => !src.includes("_delta_log") });
  const repeat = Number(args.repeat);
  await bench(engine, "events (generated)", events, join(root, "scratch"), repeat);
  await bench(engine, "COVID-19_NYT", covid, join(root, "scratch"), repeat);
  console.log(
    `\npeak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (whole process, generation included)`,
  );
} finally {
  engine.close();
  removeOwn();
}

/** The Delta type name the recipe expects for a column the bench only knows by its DuckDB type. */
function deltaTypeOf(columns: readonly TableColumn[], name: string): string {
  const type = columns.find((c) => c.name === name)?.type ?? "";
  if (type === "VARCHAR") return "string";
  if (type === "DATE") return "date";
  if (type.startsWith("TIMESTAMP")) return type.includes("TIME ZONE") ? "timestamp" : "timestamp_ntz";
  return type.toLowerCase();
}
