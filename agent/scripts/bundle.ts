/**
 * The agent's esbuild bundle, as `scripts/build.ts` makes it for shipping (the rules are there), for
 * any entry points: the build's own, and the bench that runs the agent's code as it ships
 * (`test/bench/optimus.ts`).
 */
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { type BuildResult, build, type Plugin } from "esbuild";
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

/** The shipped bundle's entries: the CLI, and the Spark log reader's threads beside it. */
export const AGENT_ENTRIES = { cli: "src/cli.ts", "optimus-worker": "src/optimus/spark/worker.ts" };

/**
 * Bundles `entryPoints` (paths relative to the agent's folder) into `outdir`, with source maps;
 * rejects once esbuild has printed the errors.
 */
export function bundleAgent(
  entryPoints: Record<string, string>,
  outdir: string,
): Promise<BuildResult<{ metafile: true }>> {
  return build({
    absWorkingDir: ROOT,
    entryPoints,
    outdir,
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
  });
}
