// Copies the Swagger UI and Redoc bundles next to the Worker as static assets (wrangler [assets]).
// Run by wrangler's [build] step and before the workerd tests; Node reads them from node_modules.
import { copyFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(import.meta.url);
const out = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "docs-assets");
mkdirSync(out, { recursive: true });
const sources = {
  "swagger-ui-bundle.js": "swagger-ui-dist/swagger-ui-bundle.js",
  "swagger-ui.css": "swagger-ui-dist/swagger-ui.css",
  "redoc.standalone.js": "redoc/bundles/redoc.standalone.js",
};
for (const [name, source] of Object.entries(sources)) copyFileSync(require.resolve(source), join(out, name));
