/**
 * Builds the agent for shipping: `src/cli.ts` bundled by esbuild into `dist/cli.js` (ES module,
 * Node 20) with a source map that carries the TypeScript sources, and the Spark log reader's worker
 * thread (`src/optimus/spark/worker.ts`) into `dist/optimus-worker.js` beside it, where the bundled
 * `parallel.ts` starts it from.
 *
 * - `@lakesmith/shared` is not published, so it is compiled into the bundle.
 * - Every other package the code imports stays an import, and must be one of this package's
 *   `dependencies` (npm installs those next to the agent, native ones such as DuckDB included). An
 *   import of anything else fails the build here rather than the customer's install at start.
 * - The version is read from `package.json` at build time (`src/version.ts`).
 * - CommonJS code in the bundle (the generated Hive Metastore Thrift code) `require`s its packages:
 *   the bundle defines `require` for it, as an ES module has none.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { AGENT_ENTRIES, bundleAgent } from "./bundle.ts";

const ROOT = join(import.meta.dirname, "..");
await rm(join(ROOT, "dist"), { recursive: true, force: true });
// esbuild has printed the errors by the time it rejects: exit without a second, longer report.
const result = await bundleAgent(AGENT_ENTRIES, join(ROOT, "dist")).catch(() => process.exit(1));
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
const built = Object.keys(result.metafile.outputs).filter((path) => path.endsWith(".js"));
process.stdout.write(`agent: built ${built.join(", ")} (${Math.round(bytes / 1024)} KiB with source maps)\n`);
