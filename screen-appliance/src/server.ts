/**
 * Serves one appliance process: reads the license, loads the models on CUDA or CPU, and serves on
 * PORT (8080). A bad license does not stop the start: `/health` and the 503 answers say what is
 * wrong. `main.ts` runs it in its own process, or in each worker process.
 */
import { createApp } from "./app.ts";
import { describeMounted } from "./classify/mounted/load.ts";
import type { ScreenConfig } from "./config.ts";
import { serveApp } from "./http/serve.ts";
import { metricsText, quietWorker, workerLoaded, workerReady } from "./http/workers.ts";
import { licenseStateAt, loadLicense } from "./license/license.ts";
import { createMetrics } from "./metrics.ts";
import { DEFAULT_MODEL_DIR, loadModels } from "./models.ts";

export async function serve(config: ScreenConfig): Promise<void> {
  // A second worker's start-up lines would repeat the first one's.
  const log = quietWorker ? () => {} : console.log;
  const license = await loadLicense(config.SCREEN_LICENSE_PATH, config.SCREEN_LICENSE_PUBLIC_KEY);
  const current = licenseStateAt(license, new Date());
  log(
    current.status === "valid"
      ? `[screen] license valid for ${current.license.customer} until ${current.license.expires}`
      : `[screen] license ${current.status}: ${current.reason}; /screen and /reveal will answer 503`,
  );

  const models = await loadModels(
    config.SCREEN_MODEL_DIR ?? DEFAULT_MODEL_DIR,
    config.SCREEN_EXECUTION_PROVIDER,
    {
      nerModelDir: config.SCREEN_NER_MODEL_DIR,
      biasModelDir: config.SCREEN_BIAS_MODEL_DIR,
      toxicityModelDir: config.SCREEN_TOXICITY_MODEL_DIR,
    },
  );
  const names = models.runtime.personNameModel;
  log(
    names.source === "mounted"
      ? `[screen] PERSON_NAME model: mounted ${names.name} from ${names.directory} (${names.tokenizerModel} tokenizer, ${names.maxTokens} tokens per window, person labels ${names.personLabels.join(" ")})`
      : `[screen] PERSON_NAME model: built-in ${names.file}`,
  );
  for (const [family, info] of [
    ["bias", models.runtime.biasModel],
    ["toxicity", models.runtime.toxicityModel],
  ] as const) {
    // Ignored labels are named here, once, rather than on every request.
    log(
      `[screen] ${family} model: ${info.source === "mounted" ? describeMounted(info) : `built-in ${info.file}`}`,
    );
  }
  if (models.fallbackReason) log(`[screen] CUDA unavailable, using CPU: ${models.fallbackReason}`);
  log(`[screen] execution provider: ${models.runtime.executionProvider}`);

  const licenseNow = () => licenseStateAt(license, new Date());
  const metrics = createMetrics(licenseNow, { defaults: true });
  const app = createApp({
    ...models,
    license: licenseNow,
    metrics,
    metricsText: metricsText(metrics.registry),
    maxBodyBytes: config.SCREEN_MAX_BODY_BYTES,
  });
  await workerLoaded(models.runtime.executionProvider);
  const { server, port } = await serveApp(app, {
    port: config.PORT,
    hostname: config.HOST,
    maxBodyBytes: config.SCREEN_MAX_BODY_BYTES,
  });
  log(`[screen] listening on http://${config.HOST}:${port}`);

  const stop = (reason: string) => {
    log(`[screen] ${reason}: closing`);
    setTimeout(() => process.exit(1), 10_000).unref();
    server.close(() => process.exit(0));
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  workerReady(() => stop("supervisor gone"));
}
