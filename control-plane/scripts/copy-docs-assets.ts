/**
 * Copies the Swagger UI and Redoc bundles next to the Worker as static assets (wrangler [assets]).
 * Run by wrangler's [build] step and before the workerd tests; the Node entry reads the same files
 * from node_modules directly.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DOCS_ASSET_SOURCES } from "../src/adapter/node-docs-assets.ts";

const require = createRequire(import.meta.url);
const out = fileURLToPath(new URL("../dist/docs-assets", import.meta.url));
mkdirSync(out, { recursive: true });
for (const [name, source] of Object.entries(DOCS_ASSET_SOURCES))
  copyFileSync(require.resolve(source), join(out, name));
