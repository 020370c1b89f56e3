/**
 * The local agent of `npm start`: one `lakesmith-agent` child process connected to this control
 * plane, so one command runs the whole system. Its object store is the `data/` folder beside the
 * embedded database (`./.lakesmith/data` by default) plus whatever `LAKESMITH_AGENT_ALLOW` adds.
 *
 * Its token belongs to the agent named "local". Tokens are shown only once, so the token is kept in
 * `local-agent.token` beside the database, readable by the owner only (0600); a later start reuses it.
 * When the file is missing or its token no longer works (revoked, or a fresh database), every
 * "local" agent is revoked and a new one is created. The child is spawned as a separate program, not
 * imported: the control plane and the agent share nothing but the protocol.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { AGENT_MALLOC_ENV } from "@lakesmith/shared/agent-malloc";
import type { Services } from "../services.ts";

const AGENT_CLI = fileURLToPath(new URL("../../../agent/bin/lakesmith-agent.js", import.meta.url));
const LOCAL_AGENT_NAME = "local";
/** How long the child may drain when the control plane stops (its jobs go back to the queue). */
const DRAIN_MS = 5000;

export interface LocalAgent {
  child: ChildProcess;
  /** Drains the agent (SIGTERM) and resolves once it exited. */
  stop(): Promise<void>;
}

/** The token of the "local" agent, reused from `tokenFile` when it still works. */
export async function localAgentToken(services: Services, tokenFile: string): Promise<string> {
  let saved: string | undefined;
  try {
    saved = readFileSync(tokenFile, "utf8").trim();
  } catch {
    saved = undefined;
  }
  if (saved) {
    const agent = await services.agents.authenticate(saved);
    if (agent?.name === LOCAL_AGENT_NAME) return saved;
  }
  const { items } = await services.agents.list(0, 1000);
  for (const agent of items) if (agent.name === LOCAL_AGENT_NAME) await services.agents.revoke(agent.id);
  const { token } = await services.agents.create(LOCAL_AGENT_NAME, null);
  mkdirSync(dirname(tokenFile), { recursive: true });
  const temp = `${tokenFile}.${process.pid}.tmp`;
  writeFileSync(temp, `${token}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, tokenFile);
  return token;
}

/**
 * Starts the local agent against `controlPlaneUrl`, with its state in `stateDir` (the folder of the
 * embedded database). The child gets an IPC channel only so that it notices when this process dies
 * without a chance to stop it, and drains instead of reconnecting forever.
 */
export async function startLocalAgent(
  services: Services,
  controlPlaneUrl: string,
  stateDir: string,
  env: Record<string, string | undefined>,
): Promise<LocalAgent> {
  const token = await localAgentToken(services, join(stateDir, "local-agent.token"));
  const dataDir = join(stateDir, "data");
  mkdirSync(dataDir, { recursive: true });
  const allow = [pathToFileURL(dataDir).href, ...(env.LAKESMITH_AGENT_ALLOW ?? "").split(",")]
    .map((p) => p.trim())
    .filter(Boolean);
  const child = spawn(process.execPath, [AGENT_CLI], {
    env: {
      // glibc's malloc as the agent's image and systemd unit set it, unless the environment does.
      ...AGENT_MALLOC_ENV,
      ...env,
      LAKESMITH_CONTROL_PLANE: controlPlaneUrl,
      LAKESMITH_AGENT_TOKEN: token,
      LAKESMITH_AGENT_ALLOW: allow.join(","),
      LAKESMITH_AGENT_NAME: env.LAKESMITH_AGENT_NAME ?? LOCAL_AGENT_NAME,
      LAKESMITH_AGENT_SCRATCH: env.LAKESMITH_AGENT_SCRATCH ?? join(stateDir, "scratch"),
      LAKESMITH_AGENT_DRAIN_TIMEOUT_MS: env.LAKESMITH_AGENT_DRAIN_TIMEOUT_MS ?? String(DRAIN_MS),
    },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // Its own process group: Ctrl-C in a terminal reaches only this process, which then drains the child.
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const force = setTimeout(() => child.kill("SIGKILL"), DRAIN_MS + 2000);
      await exited;
      clearTimeout(force);
    },
  };
}
