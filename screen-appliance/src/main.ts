/**
 * Node entry: `npm run start:screen`. Reads the configuration and serves (src/server.ts), in this
 * process or, with more than one CPU, in worker processes this one supervises (SCREEN_WORKERS,
 * src/http/workers.ts). The supervisor loads neither models nor license.
 */
import { parseConfig } from "./config.ts";
import { cpuLimit, runsWorkers, superviseWorkers } from "./http/workers.ts";

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const cpus = cpuLimit();
  if (runsWorkers(config.SCREEN_WORKERS, cpus)) {
    superviseWorkers(config.SCREEN_WORKERS, cpus);
    return;
  }
  const { serve } = await import("./server.ts");
  await serve(config);
}

main().catch((err) => {
  console.error(`[screen] failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
