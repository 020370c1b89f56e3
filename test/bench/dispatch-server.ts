/**
 * The server side of `npm run bench:dispatch`: the real Node control plane (`startNodeServer`: HTTP,
 * agent WebSockets, the in-process hub) on a fresh embedded libSQL file, in its own process so its
 * memory can be measured alone. Prints `READY <url> <admin key>`; answers `mem` on stdin with
 * `MEM <rss bytes> <heap used bytes>` after a full GC. Stops when told to or when the bench goes
 * away (stdin closes), and removes its folder.
 */
import { join } from "node:path";
import { createInterface } from "node:readline";
import { startNodeServer } from "../../control-plane/src/adapter/node-server.ts";
import { benchFolder, onShutdown } from "./lifecycle.ts";

const key = `lsk_${"d".repeat(40)}`;
const dir = benchFolder("lakesmith-bench-dispatch-");
const server = await startNodeServer({
  dbUrl: `file:${join(dir, "bench.db")}`,
  port: 0,
  bootstrap: { adminApiKey: key, adminPassword: "bench-admin-password" },
});
console.log(`READY ${server.url} ${key}`);

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "mem") return;
  (globalThis as { gc?: () => void }).gc?.();
  const { rss, heapUsed } = process.memoryUsage();
  console.log(`MEM ${rss} ${heapUsed}`);
});
onShutdown(() => server.stop());
