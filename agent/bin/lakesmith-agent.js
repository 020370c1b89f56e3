#!/usr/bin/env node
// The `lakesmith-agent` command. An installed package carries only the build (`dist/cli.js`, made
// by `npm run build` when it is packed); a checkout has the sources, which run through tsx, so
// `npm start` and the tests never run a stale build.
import { existsSync } from "node:fs";

const source = new URL("../src/cli.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  // Stack traces name the TypeScript sources (the map carries them).
  process.setSourceMapsEnabled(true);
  await import("../dist/cli.js");
}
