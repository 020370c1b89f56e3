/** Docs assets on Node: read once from the installed swagger-ui-dist and redoc packages. */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { DocsAssetName, DocsAssets } from "../docs/assets.ts";

const require = createRequire(import.meta.url);

export const DOCS_ASSET_SOURCES: Record<DocsAssetName, string> = {
  "swagger-ui-bundle.js": "swagger-ui-dist/swagger-ui-bundle.js",
  "swagger-ui.css": "swagger-ui-dist/swagger-ui.css",
  "redoc.standalone.js": "redoc/bundles/redoc.standalone.js",
};

export function nodeDocsAssets(): DocsAssets {
  const cache = new Map<DocsAssetName, Promise<string | null>>();
  return {
    get(name) {
      let hit = cache.get(name);
      if (!hit) {
        hit = readFile(require.resolve(DOCS_ASSET_SOURCES[name]), "utf8").catch(() => null);
        cache.set(name, hit);
      }
      return hit;
    },
  };
}
