/**
 * `createApp(deps)` builds the appliance's Hono app; `main.ts` wires in the license, the ONNX
 * models and the port. Tests build it with their own license key and models.
 *
 * @example
 * const app = createApp({ ...deps, license: () => ({ status: "missing", reason: "no file" }) });
 * const res = await app.request("/health");
 */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { MountedClassifierInfo } from "./classify/mounted/load.ts";
import { readJsonBody } from "./http/json-body.ts";
import { ApiError, handleError, problemResponse } from "./http/problem.ts";
import type { LicenseState } from "./license/license.ts";
import type { Metrics } from "./metrics.ts";
import type { MountedModelInfo } from "./ner/mounted/load.ts";
import { RevealRequest, ScreenRequest } from "./screen/schema.ts";
import { type ScreenDeps, screen } from "./screen/service.ts";
import { reveal } from "./transform/transform.ts";

/** Which PERSON_NAME model answers: the built-in one, or a mounted Hugging Face directory. */
export type PersonNameModelInfo =
  | { source: "built-in"; name: string; file: string }
  | ({ source: "mounted" } & MountedModelInfo);

/** Which bias or toxicity model answers: the built-in one, or a mounted Hugging Face directory. */
export type ClassifierModelInfo =
  | { source: "built-in"; name: string; file: string }
  | ({ source: "mounted" } & MountedClassifierInfo);

export interface RuntimeInfo {
  executionProvider: string;
  models: { name: string; file: string }[];
  personNameModel: PersonNameModelInfo;
  biasModel: ClassifierModelInfo;
  toxicityModel: ClassifierModelInfo;
  /** Why CUDA was not used, when it was tried. */
  cudaFallbackReason?: string;
}

export interface AppDeps extends ScreenDeps {
  /** The license state now (expiry is checked on every call). */
  license: () => LicenseState;
  runtime: RuntimeInfo;
  metrics: Metrics;
  /** The text of `GET /metrics`; by default `metrics`' registry (a worker gathers every worker's). */
  metricsText?: () => Promise<string>;
  maxBodyBytes: number;
}

export function createApp(deps: AppDeps) {
  const app = new Hono();
  app.onError(handleError);
  app.notFound((c) => problemResponse(404, `No route for ${c.req.method} ${c.req.path}.`));

  app.use("*", async (c, next) => {
    const stop = deps.metrics.duration.startTimer();
    await next();
    // The matched route pattern, not the raw path, keeps label values bounded when clients probe URLs.
    const route = c.req.routePath || "unmatched";
    stop({ route });
    deps.metrics.requests.inc({ route, status: String(c.res.status) });
  });
  app.use(
    "*",
    bodyLimit({
      maxSize: deps.maxBodyBytes,
      onError: () =>
        problemResponse(
          413,
          `Request bodies are limited to ${deps.maxBodyBytes} bytes (SCREEN_MAX_BODY_BYTES).`,
        ),
    }),
  );

  app.get("/health", (c) => {
    const license = deps.license();
    return c.json({
      status: license.status === "valid" ? "ok" : "unlicensed",
      license:
        license.status === "valid"
          ? { status: "valid", customer: license.license.customer, expires: license.license.expires }
          : { status: license.status, reason: license.reason },
      executionProvider: deps.runtime.executionProvider,
      ...(deps.runtime.cudaFallbackReason ? { cudaFallbackReason: deps.runtime.cudaFallbackReason } : {}),
      models: deps.runtime.models,
      personNameModel: deps.runtime.personNameModel,
      biasModel: deps.runtime.biasModel,
      toxicityModel: deps.runtime.toxicityModel,
    });
  });

  app.get("/metrics", async (c) => {
    const text = deps.metricsText ?? (() => deps.metrics.registry.metrics());
    return c.body(await text(), 200, {
      "content-type": deps.metrics.registry.contentType,
    });
  });

  app.post("/screen", async (c) => {
    requireLicense(deps.license(), "screen");
    const request = await readJsonBody(c, ScreenRequest);
    const result = await screen(request, deps);
    for (const f of result.findings) deps.metrics.findings.inc({ type: f.classificationType });
    return c.json(result);
  });

  app.post("/reveal", async (c) => {
    requireLicense(deps.license(), "reveal");
    const request = await readJsonBody(c, RevealRequest);
    const originalData = reveal(
      request.redactedData,
      request.transformationType,
      request.redactionMaps,
      request.encryptionKey,
    );
    return c.json({ originalData });
  });

  return app;
}

/** 503 while the license is not valid; 403 when it is valid but does not include `feature`. */
function requireLicense(license: LicenseState, feature: "screen" | "reveal"): void {
  if (license.status !== "valid") {
    throw new ApiError(503, `The appliance is not licensed: ${license.reason}.`);
  }
  if (!license.license.features.includes(feature)) {
    throw new ApiError(
      403,
      `The license for ${license.license.customer} does not include the '${feature}' feature; ask the vendor for a license with it.`,
    );
  }
}
