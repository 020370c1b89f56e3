/**
 * Opens ONNX Runtime sessions on the best execution provider available: CUDA when asked for or on
 * `auto`, falling back to CPU when the CUDA provider (or a GPU) is missing. The provider actually
 * used is returned so `/health` and the start-up log can name it.
 */
import * as ort from "onnxruntime-node";

export type ProviderPreference = "auto" | "cuda" | "cpu";

export interface OpenedSession {
  session: ort.InferenceSession;
  provider: "cuda" | "cpu";
  /** Why CUDA was not used, when it was tried and failed. */
  fallbackReason?: string;
}

export interface SessionOptions {
  /**
   * CPU threads per run; 0 lets ONNX Runtime use every core. The built-in models are small and run
   * with 1 (many requests at once); a mounted transformer is large enough to gain from more.
   */
  cpuThreads?: number;
}

/**
 * The CPU threads this process may give one run when it is one of several worker processes: the
 * supervisor (src/http/workers.ts) sets SCREEN_WORKER_THREADS for each worker it starts.
 */
export function workerThreadShare(): number | undefined {
  const share = Number(process.env.SCREEN_WORKER_THREADS);
  return Number.isInteger(share) && share >= 1 ? share : undefined;
}

export async function openSession(
  path: string,
  preference: ProviderPreference,
  options: SessionOptions = {},
): Promise<OpenedSession> {
  let fallbackReason: string | undefined;
  if (preference !== "cpu") {
    // ORT prints a multi-line native error when the CUDA library is missing; on `auto` that is
    // expected, so its global logger is quieted and the caller logs one line instead.
    if (preference === "auto") ort.env.logLevel = "fatal";
    try {
      const session = await ort.InferenceSession.create(path, {
        executionProviders: ["cuda"],
        logSeverityLevel: preference === "auto" ? 4 : 2,
      });
      return { session, provider: "cuda" };
    } catch (err) {
      if (preference === "cuda") throw err;
      fallbackReason = err instanceof Error ? err.message.split("\n")[0] : String(err);
    } finally {
      ort.env.logLevel = "warning";
    }
  }
  const session = await ort.InferenceSession.create(path, {
    executionProviders: ["cpu"],
    // Requests are small and many run at once; one thread per session avoids oversubscription.
    intraOpNumThreads: options.cpuThreads ?? 1,
    interOpNumThreads: 1,
  });
  return { session, provider: "cpu", ...(fallbackReason ? { fallbackReason } : {}) };
}

/** Runs a hashed bag model: `rows` is [items, width] int32, `scale` is [items, 1]. */
export async function runBagModel(
  session: ort.InferenceSession,
  rows: Int32Array,
  scale: Float32Array,
  items: number,
  width: number,
): Promise<Float32Array> {
  const out = await session.run({
    rows: new ort.Tensor("int32", rows, [items, width]),
    scale: new ort.Tensor("float32", scale, [items, 1]),
  });
  const probs = out.probs;
  if (!probs) throw new Error("model has no 'probs' output");
  return probs.data as Float32Array;
}
