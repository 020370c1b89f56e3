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
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { build, type Plugin } from "esbuild";
import pkg from "../package.json" with { type: "json" };

const ROOT = join(import.meta.dirname, "..");
const BUNDLED = new Set(["@lakesmith/shared"]);
const DEPENDENCIES = new Set(Object.keys(pkg.dependencies));

/** The package a bare import names: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier);
}

/** Leaves declared dependencies as imports and refuses any other package. */
const dependenciesOnly: Plugin = {
  name: "dependencies-only",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("node:") || builtinModules.includes(args.path)) return { external: true };
      const name = packageOf(args.path);
      if (BUNDLED.has(name)) return undefined;
      if (DEPENDENCIES.has(name)) return { external: true };
      return {
        errors: [
          {
            text: `${args.path} is imported by ${relative(ROOT, args.importer)} but is not in agent/package.json "dependencies": add it there, or the installed agent fails to start`,
          },
        ],
      };
    });
  },
};

/** `src/version.ts` reads the version from package.json: only the version goes into the bundle. */
const versionOnly: Plugin = {
  name: "version-only",
  setup(b) {
    const manifest = join(ROOT, "package.json").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    b.onLoad({ filter: new RegExp(`^${manifest}$`) }, () => ({
      contents: JSON.stringify({ version: pkg.version }),
      loader: "json",
    }));
  },
};

await rm(join(ROOT, "dist"), { recursive: true, force: true });
// esbuild has printed the errors by the time it rejects: exit without a second, longer report.
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { cli: "src/cli.ts", "optimus-worker": "src/optimus/spark/worker.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  sourcesContent: true,
  legalComments: "none",
  banner: {
    js: 'import { createRequire } from "node:module"; const require = createRequire(import.meta.url);',
  },
  logLevel: "warning",
  // The generated Thrift code repeats a `case 0:` in some reads; harmless, and not ours to edit.
  logOverride: { "duplicate-case": "silent" },
  plugins: [dependenciesOnly, versionOnly],
  metafile: true,
}).catch(() => process.exit(1));
const bytes = Object.values(result.metafile.outputs).reduce((sum, o) => sum + o.bytes, 0);
const built = Object.keys(result.metafile.outputs).filter((path) => path.endsWith(".js"));
process.stdout.write(`agent: built ${built.join(", ")} (${Math.round(bytes / 1024)} KiB with source maps)\n`);
