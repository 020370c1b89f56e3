/**
 * Real agents for end-to-end tests: in this process (many at once, with a registry that counts how
 * often each job's handler ran) or as a child process running the `lakesmith-agent` CLI, which a
 * test can SIGKILL or SIGTERM like an operator would.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { Agent } from "../../agent/src/agent.ts";
import { parseConfig } from "../../agent/src/config.ts";
import { noopHandler, sleepHandler } from "../../agent/src/handlers/diagnostic.ts";
import { defineHandler, HandlerRegistry, type JobHandler } from "../../agent/src/registry.ts";

const CLI = fileURLToPath(new URL("../../agent/bin/lakesmith-agent.js", import.meta.url));

/** What the handlers of a counting registry saw, per job id. */
export interface RunLog {
  runs: Map<string, number>;
  aborted: Set<string>;
}

export function newRunLog(): RunLog {
  return { runs: new Map(), aborted: new Set() };
}

function counted(handler: JobHandler, log: RunLog): JobHandler {
  return defineHandler({
    ...handler,
    async run(ctx) {
      log.runs.set(ctx.job.id, (log.runs.get(ctx.job.id) ?? 0) + 1);
      try {
        return await handler.run(ctx);
      } finally {
        if (ctx.signal.aborted) log.aborted.add(ctx.job.id);
      }
    },
  });
}

/** noop and sleep, counting every handler run in `log`. */
export function countingRegistry(log: RunLog): HandlerRegistry {
  return new HandlerRegistry([counted(noopHandler, log), counted(sleepHandler, log)]);
}

export interface InProcessAgentOptions {
  concurrency?: number;
  allow?: string[];
  drainTimeoutMs?: number;
  /** The agent's scratch folder; the caller removes it. Default: a new folder under the OS temp folder. */
  scratch?: string;
}

/** Starts an agent in this process; stop it with `agent.stop()` or `agent.drain()`. */
export async function startAgent(
  url: string,
  token: string,
  log: RunLog,
  options: InProcessAgentOptions = {},
): Promise<Agent> {
  const agent = new Agent({
    config: parseConfig({
      control_plane: url,
      token,
      concurrency: options.concurrency ?? 2,
      allow: options.allow ?? [],
      scratch: options.scratch ?? mkdtempSync(join(tmpdir(), "lakesmith-agent-scratch-")),
      drain_timeout_ms: options.drainTimeoutMs ?? 5000,
      reconnect_base_ms: 50,
      reconnect_max_ms: 500,
      log_level: "silent",
    }),
    registry: countingRegistry(log),
    log: pino({ level: process.env.LAKESMITH_E2E_LOG ?? "silent" }),
  });
  await agent.start();
  return agent;
}

export interface ChildAgent {
  child: ChildProcess;
  /** Every JSON log line so far. */
  logs(): Record<string, unknown>[];
  /** Resolves with the first log line `match` accepts. */
  waitForLog(
    match: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
  output(): string;
}

/**
 * Runs `lakesmith-agent` as a child process with `env` (flags may be given too). `cli` runs another entry point than the checkout's command
 * (benches pass the build, `agent/dist/cli.js`, to measure what an installed agent runs); `nodeArgs` go to
 * node before it (a bench's `--cpu-prof`).
 */
export function spawnAgent(
  env: Record<string, string>,
  args: string[] = [],
  cli = CLI,
  nodeArgs: string[] = [],
): ChildAgent {
  const child = spawn(process.execPath, [...nodeArgs, cli, ...args], {
    env: {
      ...process.env,
      LAKESMITH_AGENT_RECONNECT_BASE_MS: "50",
      LAKESMITH_AGENT_RECONNECT_MAX_MS: "500",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const lines: Record<string, unknown>[] = [];
  const waiters: {
    match: (l: Record<string, unknown>) => boolean;
    resolve: (l: Record<string, unknown>) => void;
  }[] = [];
  let partial = "";
  child.stdout?.on("data", (chunk) => {
    out += chunk;
    partial += chunk;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    for (const part of parts) {
      if (!part.trim()) continue;
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(part);
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of [...waiters])
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  child.stderr?.on("data", (chunk) => {
    out += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    logs: () => [...lines],
    output: () => out,
    exited,
    waitForLog(match, timeoutMs = 15_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching agent log line; output:\n${out}`)),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (l) => {
            clearTimeout(timer);
            resolve(l);
          },
        });
      });
    },
  };
}
