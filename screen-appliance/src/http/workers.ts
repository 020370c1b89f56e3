/**
 * Serving from several processes (`SCREEN_WORKERS`). One Node process runs its JavaScript on one
 * core, and a request's detectors, features and ONNX runs are all CPU work on that thread; on CPU
 * the appliance therefore runs one worker process per core it may use, sharing the listening port
 * through `node:cluster`. Each worker loads its own models (about 450 MB resident each).
 *
 * The primary process only supervises:
 * - it starts one worker and waits until it has loaded its models; on `auto`, that worker's
 *   execution provider decides the count: on CUDA one process feeds the GPU, on CPU one per core
 *   (the cgroup's CPU quota counts, so a container limited to 2 CPUs on a big host runs 2); the
 *   workers listen once they all have their models, so early connections do not all land on one;
 * - a worker that fails before it listens stops the whole appliance with exit code 1 (its error is
 *   already on stderr), rather than restarting into the same error; one that dies later is replaced;
 * - SIGTERM and SIGINT go to every worker, which closes its connections and exits;
 * - `GET /metrics`, answered by whichever worker took the connection, holds every worker's counters:
 *   the worker asks the primary, which gathers them from every listening worker and adds them up
 *   (prom-client's aggregation).
 */
import cluster, { type Worker } from "node:cluster";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import {
  AggregatorRegistry,
  type MetricObjectWithValues,
  type MetricValue,
  type Registry,
} from "prom-client";

export type WorkerSetting = number | "auto";

/** One registry's metrics as prom-client passes them between processes. */
type MetricsJson = MetricObjectWithValues<MetricValue<string>>[];

/** Messages between the primary and its workers. */
type WorkerMessage =
  // A worker has its models; it listens once the primary says so.
  | { type: "screen:loaded"; executionProvider: string }
  | { type: "screen:listen" }
  | { type: "screen:ready" }
  // A worker asks for every worker's metrics; the primary answers with their text.
  | { type: "screen:metrics-request"; id: number }
  | { type: "screen:metrics"; id: number; text?: string; error?: string }
  // The primary gathers one worker's metrics.
  | { type: "screen:metrics-gather"; id: number }
  | { type: "screen:metrics-part"; id: number; metrics: MetricsJson };

const RESTART_DELAY_MS = 1000;
const STOP_GRACE_MS = 15_000;
const METRICS_TIMEOUT_MS = 5000;

/**
 * CPUs this process may use: the cores it may run on, capped by the cgroup's CPU quota (v2
 * `cpu.max`, or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) when one is set.
 */
export function cpuLimit(cgroupRoot = "/sys/fs/cgroup", cores = availableParallelism()): number {
  const read = (path: string) => {
    try {
      return readFileSync(`${cgroupRoot}/${path}`, "utf8").trim();
    } catch {
      return undefined;
    }
  };
  let quota: number | undefined;
  const v2 = read("cpu.max")?.split(/\s+/);
  if (v2 && v2[0] !== "max") quota = Number(v2[0]) / Number(v2[1]);
  else if (!v2) {
    const v1Quota = Number(read("cpu/cpu.cfs_quota_us"));
    const v1Period = Number(read("cpu/cpu.cfs_period_us"));
    if (v1Quota > 0 && v1Period > 0) quota = v1Quota / v1Period;
  }
  const limit = quota !== undefined && Number.isFinite(quota) && quota > 0 ? Math.ceil(quota) : cores;
  return Math.max(1, Math.min(cores, limit));
}

/** How many workers to run once the first one reports its execution provider. */
export function workerCount(setting: WorkerSetting, executionProvider: string, cpus: number): number {
  if (setting !== "auto") return setting;
  return executionProvider.includes("cuda") ? 1 : cpus;
}

/**
 * The CPU threads each worker may give one run of a large (mounted) model: on `auto` the workers are
 * one per CPU (or one on CUDA, where CPU threads do not matter), so one each; otherwise the CPUs
 * shared out.
 */
export function workerThreads(setting: WorkerSetting, cpus: number): number {
  return setting === "auto" ? 1 : Math.max(1, Math.floor(cpus / setting));
}

/** Whether `main` should supervise workers rather than serve in this process. */
export function runsWorkers(setting: WorkerSetting, cpus: number): boolean {
  return cluster.isPrimary && (setting === "auto" ? cpus > 1 : setting > 1);
}

/** The primary: starts, replaces and stops the workers; never serves requests itself. */
export function superviseWorkers(setting: WorkerSetting, cpus: number, log = console.log): void {
  /** Workers that have their models, and those that listen. */
  const loaded = new Set<Worker>();
  const ready = new Set<Worker>();
  const gatherings = new Map<number, { waiting: Set<Worker>; parts: MetricsJson[]; done: () => void }>();
  let nextGathering = 0;

  /** Every listening worker's metrics, added up (counters summed, gauges per prom-client's rules). */
  const gather = () =>
    new Promise<string>((resolve, reject) => {
      const id = nextGathering++;
      const waiting = new Set(ready);
      const parts: MetricsJson[] = [];
      const timer = setTimeout(() => {
        gatherings.delete(id);
        reject(new Error(`${waiting.size} worker(s) did not send their metrics in time`));
      }, METRICS_TIMEOUT_MS);
      const done = () => {
        if (waiting.size > 0) return;
        clearTimeout(timer);
        gatherings.delete(id);
        AggregatorRegistry.aggregate(parts).metrics().then(resolve, reject);
      };
      gatherings.set(id, { waiting, parts, done });
      for (const worker of waiting)
        worker.send({ type: "screen:metrics-gather", id } satisfies WorkerMessage);
      done();
    });
  /** Decided when the first worker listens, from its execution provider. */
  let target: number | undefined;
  /** Whether all `target` workers have listened once; later ones replace workers that died. */
  let started = false;
  let stopping = false;

  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (workers.length === 0) process.exit(code);
    setTimeout(() => process.exit(1), STOP_GRACE_MS).unref();
    let left = workers.length;
    for (const worker of workers) {
      worker.once("exit", () => {
        left -= 1;
        if (left === 0) process.exit(code);
      });
      worker.process.kill("SIGTERM");
    }
  };

  const start = () => {
    // Workers after the first leave the start-up lines to it. SCREEN_WORKER_THREADS is read by
    // src/ml/session.ts.
    const worker = cluster.fork({
      SCREEN_WORKER_QUIET: loaded.size > 0 ? "1" : "",
      SCREEN_WORKER_THREADS: String(workerThreads(setting, cpus)),
    });
    worker.on("message", (message: WorkerMessage) => {
      if (message.type === "screen:loaded") {
        loaded.add(worker);
        if (target === undefined) {
          target = workerCount(setting, message.executionProvider, cpus);
          for (let i = 1; i < target; i++) start();
        }
        // The port opens when every worker can take connections, so none piles up on the first;
        // a replacement listens as soon as it has its models.
        if (started) worker.send({ type: "screen:listen" } satisfies WorkerMessage);
        else if (loaded.size === target)
          for (const w of loaded) w.send({ type: "screen:listen" } satisfies WorkerMessage);
      } else if (message.type === "screen:ready") {
        ready.add(worker);
        if (!started && ready.size === target) {
          started = true;
          log(
            `[screen] ${target} worker process${target === 1 ? "" : "es"} listening (SCREEN_WORKERS=${setting})`,
          );
        }
      } else if (message.type === "screen:metrics-part") {
        const gathering = gatherings.get(message.id);
        if (gathering?.waiting.delete(worker)) {
          gathering.parts.push(message.metrics);
          gathering.done();
        }
      } else if (message.type === "screen:metrics-request") {
        gather().then(
          (text) => worker.send({ type: "screen:metrics", id: message.id, text }),
          (err: Error) => worker.send({ type: "screen:metrics", id: message.id, error: err.message }),
        );
      }
    });
    worker.on("exit", (code, signal) => {
      loaded.delete(worker);
      const wasReady = ready.delete(worker);
      // A gathering does not wait for a worker that is gone.
      for (const gathering of gatherings.values()) if (gathering.waiting.delete(worker)) gathering.done();
      if (stopping) return;
      if (!wasReady) {
        log(`[screen] a worker stopped during start-up (${signal ?? `exit code ${code}`}); stopping`);
        stopAll(1);
        return;
      }
      log(`[screen] a worker stopped (${signal ?? `exit code ${code}`}); starting another`);
      setTimeout(() => {
        if (!stopping) start();
      }, RESTART_DELAY_MS);
    });
  };

  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.on(signal, () => {
      if (!stopping) log(`[screen] ${signal}: stopping the workers`);
      stopAll(0);
    });
  start();
}

/**
 * In a worker, once its models are loaded: tells the primary and resolves when the primary says to
 * listen (when every worker has its models). Alone, resolves at once.
 */
export function workerLoaded(executionProvider: string): Promise<void> {
  if (!cluster.isWorker) return Promise.resolve();
  return new Promise((resolve) => {
    const listen = (message: WorkerMessage) => {
      if (message.type !== "screen:listen") return;
      process.off("message", listen);
      resolve();
    };
    process.on("message", listen);
    process.send?.({ type: "screen:loaded", executionProvider } satisfies WorkerMessage);
  });
}

/** In a worker: tells the primary it listens, and leaves when the primary is gone. */
export function workerReady(stop: () => void): void {
  if (!cluster.isWorker) return;
  process.send?.({ type: "screen:ready" } satisfies WorkerMessage);
  process.once("disconnect", stop);
}

/** Whether start-up lines should be left to the first worker. */
export const quietWorker = cluster.isWorker && process.env.SCREEN_WORKER_QUIET === "1";

/**
 * The metrics text for `GET /metrics`: this process's registry when it serves alone, every
 * worker's counters together when it is one of several.
 */
export function metricsText(registry: Registry): () => Promise<string> {
  if (!cluster.isWorker) return () => registry.metrics();
  const pending = new Map<number, (message: WorkerMessage & { type: "screen:metrics" }) => void>();
  let next = 0;
  process.on("message", (message: WorkerMessage) => {
    if (message.type === "screen:metrics") pending.get(message.id)?.(message);
    else if (message.type === "screen:metrics-gather")
      registry
        .getMetricsAsJSON()
        // A registry that cannot be read adds nothing rather than holding up every /metrics.
        .catch((): MetricsJson => [])
        .then((metrics) =>
          process.send?.({ type: "screen:metrics-part", id: message.id, metrics } satisfies WorkerMessage),
        );
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error("the other workers' metrics did not arrive in time"));
      }, METRICS_TIMEOUT_MS);
      pending.set(id, (message) => {
        clearTimeout(timer);
        pending.delete(id);
        if (message.text !== undefined) resolve(message.text);
        else reject(new Error(message.error ?? "no metrics"));
      });
      process.send?.({ type: "screen:metrics-request", id } satisfies WorkerMessage);
    });
}
