/**
 * The agent as customers get it: `npm pack` of `agent/` (which builds it), the tarball installed
 * into an empty folder outside the repository with its own dependencies from the npm registry and
 * nothing from the workspace, then run: `--help`, and a real connection to a control plane that
 * onboards a Delta table written by another engine and runs a diagnostic job on it.
 *
 * There is no Docker engine or systemd here, so the Dockerfile and the systemd unit of
 * `docs/agent-install.md` are checked against that same install: the paths they name exist in it,
 * and the command line they start parses with the settings they give.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { promisify } from "node:util";
import { AGENT_MALLOC_ENV } from "@lakesmith/shared/agent-malloc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELTA_FIXTURES } from "../agent/test/support/fixtures.ts";
import { eventually, onboardTable, startPlane, type TestPlane } from "./support/plane.ts";

const run = promisify(execFile);
const REPO = join(import.meta.dirname, "..");
const AGENT = join(REPO, "agent");
const manifest = JSON.parse(readFileSync(join(AGENT, "package.json"), "utf8"));
/** Where the Dockerfile and the systemd unit install the package; mapped onto the test's install. */
const INSTALL_PREFIX = "/opt/lakesmith-agent";

const work = mkdtempSync(join(tmpdir(), "lakesmith-agent-package-"));
const packDir = join(work, "pack");
const prefix = join(work, "install");
const installed = join(prefix, "node_modules/@lakesmith/agent");
const bin = join(prefix, "node_modules/.bin/lakesmith-agent");
let tarball = "";
let plane: TestPlane | undefined;
const children: ChildProcess[] = [];

/** The environment of a customer's shell: no npm or vitest settings of this run leak in. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|NODE_PATH$|VITEST|TSX_|INIT_CWD$)/i.test(key))
      env[key] = value;
  return { ...env, ...extra };
}

beforeAll(async () => {
  mkdirSync(packDir);
  mkdirSync(prefix);
  // `prepack` builds dist/ first, as it does for a release.
  await run("npm", ["pack", "--pack-destination", packDir], { cwd: AGENT, env: cleanEnv() });
  const packed = readdirSync(packDir).filter((f) => f.endsWith(".tgz"));
  expect(packed).toHaveLength(1);
  tarball = join(packDir, packed[0] as string);
  await run(
    "npm",
    ["install", "--prefix", prefix, "--prefer-offline", "--omit=dev", "--no-audit", "--no-fund", tarball],
    { cwd: prefix, env: cleanEnv(), maxBuffer: 16 * 1024 * 1024 },
  );
}, 300_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await plane?.stop();
  rmSync(work, { recursive: true, force: true });
});

/** Starts the installed `lakesmith-agent` and collects its JSON log lines. */
function startInstalled(args: string[], env: Record<string, string>) {
  const child = spawn(bin, args, { cwd: prefix, env: cleanEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  let output = "";
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk;
    partial += chunk;
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    for (const part of parts) {
      try {
        lines.push(JSON.parse(part));
      } catch {
        // not a log line
      }
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const waitForLog = (msg: string) =>
    eventually(() => lines.find((l) => l.msg === msg), 30_000, `"${msg}" from the agent; output:\n${output}`);
  return { child, exited, waitForLog, output: () => output };
}

/** Runs the installed CLI to completion. */
async function runInstalled(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(bin, args, { cwd: prefix, env: cleanEnv(env) });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** `--print-config` of the installed CLI: the settings these arguments and variables make. */
async function printConfig(args: string[], env: Record<string, string>) {
  const printed = await runInstalled([...args, "--print-config"], env);
  expect(printed.code, printed.stderr).toBe(0);
  return JSON.parse(printed.stdout);
}

/** The fenced code blocks of docs/agent-install.md in `lang`. */
function fenced(lang: string): string[] {
  const doc = readFileSync(join(REPO, "docs/agent-install.md"), "utf8");
  return [...doc.matchAll(new RegExp(`^\`\`\`${lang}\n([\\s\\S]*?)^\`\`\``, "gm"))].map(
    (m) => m[1] as string,
  );
}

/** The documented `agent.json`, written where the test can pass it to --config. */
function exampleConfig(): string {
  const example = fenced("json").find((b) => b.includes('"control_plane"'));
  expect(example, "an agent.json example in docs/agent-install.md").toBeDefined();
  const file = join(work, "agent.json");
  writeFileSync(file, example as string);
  return file;
}

const onPath = (command: string) =>
  (process.env.PATH ?? "").split(delimiter).some((dir) => dir && existsSync(join(dir, command)));

/** A path the Dockerfile or the unit names under INSTALL_PREFIX, in the test's install. */
function inInstall(path: string): string {
  expect(path.startsWith(`${INSTALL_PREFIX}/`), path).toBe(true);
  return join(prefix, relative(INSTALL_PREFIX, path));
}

describe("the packed agent", () => {
  it("packs the build, its source map, the bin and the README, and nothing else", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball]);
    expect(stdout.trim().split("\n").sort()).toEqual([
      "package/README.md",
      "package/bin/lakesmith-agent.js",
      "package/dist/cli.js",
      "package/dist/cli.js.map",
      "package/dist/optimus-worker.js",
      "package/dist/optimus-worker.js.map",
      "package/package.json",
    ]);
    const map = JSON.parse(readFileSync(join(installed, "dist/cli.js.map"), "utf8"));
    expect(map.sources).toEqual(expect.arrayContaining(["../src/cli.ts", "../../shared/src/protocol.ts"]));
    expect(map.sourcesContent).toHaveLength(map.sources.length);
  });

  it("installs alone: its manifest names only registry packages, all of them installed", () => {
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
    expect(pkg).toMatchObject({
      name: "@lakesmith/agent",
      version: manifest.version,
      bin: { "lakesmith-agent": "bin/lakesmith-agent.js" },
      engines: { node: expect.any(String) },
    });
    expect(pkg.private).toBeUndefined();
    for (const [name, version] of Object.entries(pkg.dependencies as Record<string, string>)) {
      expect(name).not.toMatch(/^@lakesmith\//);
      expect(
        JSON.parse(readFileSync(join(prefix, "node_modules", name, "package.json"), "utf8")).version,
      ).toBe(version);
    }
    // What the workspace provides in the repository is not there: the bundle carries shared/.
    const top = readdirSync(join(prefix, "node_modules"));
    expect(top).not.toContain("tsx");
    expect(readdirSync(join(prefix, "node_modules/@lakesmith"))).toEqual(["agent"]);
  });

  it("runs the bundled Spark log reader and window threads from the install: real logs' queries come back", async () => {
    const logs = join(work, "spark-logs");
    mkdirSync(logs);
    cpSync(join(DELTA_FIXTURES, "../query-logs/spark/eventlog_dsv1.zstd"), join(logs, "app-1.zstd"));
    cpSync(join(DELTA_FIXTURES, "../query-logs/spark/nds_q88_photon_db_13_3.zstd"), join(logs, "app-2.zstd"));
    // The threads' protocol (agent/src/optimus/spark/protocol.ts): the reader reads the store through
    // a port this script serves (store/port.ts: read -> chunk, end); a log in, batches and `done` out.
    // app-2 has a 128 MiB zstd window: the reader gives it back (`deferred`) unless told it may decode
    // it in the window thread, which it then does.
    const script = `
      import { readFileSync } from "node:fs";
      import { MessageChannel, Worker } from "node:worker_threads";
      const entry = new URL("./dist/optimus-worker.js", import.meta.url);
      const store = new MessageChannel();
      store.port1.on("message", (m) => {
        if (m.type !== "read") return;
        const bytes = new Uint8Array(readFileSync(${JSON.stringify(logs)} + "/" + m.key)).buffer;
        store.port1.postMessage({ type: "chunk", id: m.id, bytes }, [bytes]);
        store.port1.postMessage({ type: "end", id: m.id });
      });
      const worker = new Worker(entry, {
        workerData: { role: "reader", uri: ${JSON.stringify(`file://${logs}/`)}, store: store.port2, batchSize: 256, maxInFlight: 4 },
        transferList: [store.port2],
      });
      const windowThread = new Worker(entry, { workerData: { role: "window" } });
      const ports = new MessageChannel();
      windowThread.postMessage({ type: "window", port: ports.port1 }, [ports.port1]);
      worker.postMessage({ type: "window", port: ports.port2 }, [ports.port2]);
      const log = (key, window) => ({ type: "log", window, log: { key, parts: [{ key, size: 1, lastModified: new Date() }] } });
      const replies = [];
      let ids = [];
      worker.on("error", (e) => { console.error(e.message); process.exit(1); });
      worker.on("message", (m) => {
        if (m.type === "batch") {
          ids.push(...m.queries.map((q) => q.id + " " + (q.startedAt instanceof Date)));
          worker.postMessage({ type: "credit" });
          return;
        }
        replies.push({ reply: m.type, ids, stats: m.stats });
        ids = [];
        if (replies.length === 1) worker.postMessage(log("app-2.zstd", false));
        else if (replies.length === 2) worker.postMessage(log("app-2.zstd", true));
        else { console.log(JSON.stringify(replies)); worker.terminate(); windowThread.terminate(); }
      });
      worker.postMessage(log("app-1.zstd", false));`;
    writeFileSync(join(installed, "read-spark-log.mjs"), script);
    const { stdout } = await run(process.execPath, ["read-spark-log.mjs"], {
      cwd: installed,
      env: cleanEnv(),
    });
    rmSync(join(installed, "read-spark-log.mjs"));
    const [small, deferred, large] = JSON.parse(stdout);
    expect(small.reply).toBe("done");
    expect(small.stats).toMatchObject({ logs: 1, malformedLines: 0 });
    expect(small.ids.length).toBeGreaterThan(0);
    expect(small.ids.every((id: string) => id.startsWith("app-1.zstd#") && id.endsWith(" true"))).toBe(true);
    expect(deferred).toMatchObject({ reply: "deferred", ids: [], stats: { logs: 1 } });
    expect(large.reply).toBe("done");
    expect(large.stats).toMatchObject({ logs: 2, malformedLines: 0 });
    expect(large.ids.length).toBeGreaterThan(0);
    expect(large.ids.every((id: string) => id.startsWith("app-2.zstd#"))).toBe(true);
  });

  it("prints its usage with --help, and names a bad option with exit code 2", async () => {
    const help = await runInstalled(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: lakesmith-agent --control-plane URL --token TOKEN");
    expect(help.stdout).toContain("--allow <value>");
    const bad = await runInstalled([
      "--control-plane",
      "http://127.0.0.1:1",
      "--token",
      "t",
      "--concurrency",
      "x",
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--concurrency: must be a whole number");
  });

  it("connects to a control plane, onboards a Delta table and runs a job, then drains on SIGTERM", async () => {
    plane = await startPlane();
    const { id, token } = await plane.createAgentToken("packaged-agent");
    const lake = join(work, "lake");
    const table = join(lake, "simple_table");
    cpSync(join(DELTA_FIXTURES, "simple_table"), table, { recursive: true });
    const agent = startInstalled([], {
      LAKESMITH_CONTROL_PLANE: plane.url,
      LAKESMITH_AGENT_TOKEN: token,
      LAKESMITH_AGENT_ALLOW: `file://${lake}`,
      LAKESMITH_AGENT_SCRATCH: join(work, "scratch"),
      LAKESMITH_AGENT_RECONNECT_BASE_MS: "50",
      LAKESMITH_AGENT_RECONNECT_MAX_MS: "500",
    });
    await agent.waitForLog("session established");
    const listed = (await plane.api("GET", "/api/v1/agents")).body.items.find(
      (a: { id: string }) => a.id === id,
    );
    expect(listed).toMatchObject({ status: "connected", version: manifest.version });

    const onboarded = await onboardTable(plane, "fixtures.simple_table", `file://${table}`);
    expect(onboarded.job.status, onboarded.job.error ?? "").toBe("succeeded");
    expect(onboarded.job.agent_id).toBe(id);
    expect(onboarded.table.onboarding_status).toBe("active");

    const noop = await plane.waitForJob(await plane.enqueue("noop"), ["succeeded", "failed"], 30_000);
    expect(noop).toMatchObject({ status: "succeeded", agent_id: id });

    agent.child.kill("SIGTERM");
    expect(await agent.exited, agent.output()).toBe(0);
  }, 120_000);
});

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function dockerInstructions(text: string): { op: string; args: string }[] {
  const joined = text
    .split("\n")
    .filter((l) => !l.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [op = "", ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** A Dockerfile or .dockerignore glob (`*` within a path segment) as a regular expression. */
const globRegex = (glob: string) =>
  new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replaceAll("*", "[^/]*")
      .replaceAll("?", "[^/]")}$`,
  );

/**
 * Whether `.dockerignore` keeps `file` in the build context: the last line that matches the file or
 * one of its folders decides.
 */
function inContext(ignore: string, file: string): boolean {
  const segments = file.split("/");
  const paths = segments.map((_, i) => segments.slice(0, i + 1).join("/"));
  let kept = true;
  for (const raw of ignore.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    const pattern = globRegex(negated ? line.slice(1) : line);
    if (paths.some((p) => pattern.test(p))) kept = negated;
  }
  return kept;
}

describe("agent/Dockerfile", () => {
  const dockerfile = dockerInstructions(readFileSync(join(AGENT, "Dockerfile"), "utf8"));
  const all = (op: string) => dockerfile.filter((i) => i.op === op).map((i) => i.args);
  const last = (op: string) => all(op).at(-1) ?? "";
  const env = Object.fromEntries(
    all("ENV").flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])),
  ) as Record<string, string>;

  it("sets glibc's malloc as the systemd unit does (memory the agent's threads free goes back)", () => {
    const install = readFileSync(join(AGENT, "../docs/agent-install.md"), "utf8");
    for (const [name, value] of Object.entries(AGENT_MALLOC_ENV)) {
      expect(env[name]).toBe(value);
      expect(install).toContain(`Environment=${name}=${value}`);
    }
  });

  it("starts from Node 20 and runs as a user other than root", () => {
    expect(all("FROM")).toEqual([expect.stringMatching(/^node:20[-.\w]*$/)]);
    const user = last("USER");
    expect(user).not.toBe("");
    expect(user.split(":")[0]).not.toMatch(/^(root|0)$/);
  });

  it("copies only what npm pack made, and .dockerignore keeps it in the context", () => {
    const packed = readdirSync(packDir);
    const ignore = readFileSync(join(AGENT, ".dockerignore"), "utf8");
    expect(all("ADD")).toEqual([]);
    expect(all("COPY").length).toBeGreaterThan(0);
    for (const copy of all("COPY")) {
      const sources = copy
        .split(/\s+/)
        .filter((s) => !s.startsWith("--"))
        .slice(0, -1);
      for (const source of sources) {
        const matches = packed.filter((f) => globRegex(source).test(f));
        expect(matches, `COPY ${source}`).toEqual([relative(packDir, tarball)]);
        expect(inContext(ignore, matches[0] as string), `${source} in the build context`).toBe(true);
      }
    }
    expect(inContext(ignore, "src/cli.ts")).toBe(false);
  });

  it("installs under the prefix its entry point names, and the entry point runs the agent", async () => {
    expect(
      dockerfile.some((i) => i.op === "RUN" && i.args.includes(`npm install --prefix ${INSTALL_PREFIX} `)),
    ).toBe(true);
    const entrypoint: string[] = JSON.parse(last("ENTRYPOINT"));
    const cmd: string[] = JSON.parse(last("CMD"));
    accessSync(inInstall(entrypoint[0] as string), constants.X_OK);

    // The image's command and variables, with the documented config file: the settings they make.
    const configAt = cmd.indexOf("--config") + 1;
    expect(configAt).toBeGreaterThan(0);
    const args = [...entrypoint.slice(1), ...cmd.map((a, i) => (i === configAt ? exampleConfig() : a))];
    const settings = await printConfig(args, env);
    expect(settings.scratch).toBe(env.LAKESMITH_AGENT_SCRATCH);

    const volumes: string[] = all("VOLUME").flatMap((v) =>
      v.startsWith("[") ? JSON.parse(v) : v.split(/\s+/),
    );
    const inVolume = (path: string) => volumes.some((v) => path === v || path.startsWith(`${v}/`));
    expect(inVolume(settings.scratch), `scratch ${settings.scratch} in ${volumes}`).toBe(true);
    expect(inVolume(cmd[configAt] as string), `config ${cmd[configAt]} in ${volumes}`).toBe(true);
  });
});

describe("the systemd unit of docs/agent-install.md", () => {
  const unitText = fenced("ini").find((b) => b.includes("[Service]")) ?? "";
  const unit = new Map<string, string[]>();
  for (const line of unitText.split("\n")) {
    const m = /^(\w+)=(.*)$/.exec(line);
    if (m) unit.set(m[1] as string, [...(unit.get(m[1] as string) ?? []), m[2] as string]);
  }
  const value = (key: string) => unit.get(key)?.at(-1) ?? "";

  it("runs the installed agent as its own user with the documented config, scratch in its state directory", async () => {
    expect(value("User")).toMatch(/^lakesmith-agent$/);
    const [program = "", ...args] = value("ExecStart").split(/\s+/);
    accessSync(inInstall(program), constants.X_OK);
    const env = Object.fromEntries(
      (unit.get("Environment") ?? []).map((e) => e.split("=", 2) as [string, string]),
    ) as Record<string, string>;
    const configAt = args.indexOf("--config") + 1;
    expect(configAt).toBeGreaterThan(0);
    const settings = await printConfig(
      args.map((a, i) => (i === configAt ? exampleConfig() : a)),
      env,
    );
    // ProtectSystem=strict: only the state directory and ReadWritePaths are writable.
    expect(value("ProtectSystem")).toBe("strict");
    expect(settings.scratch.startsWith(`/var/lib/${value("StateDirectory")}/`), settings.scratch).toBe(true);
    // The allowed file:// tables are written to (crunch, vacuum): they must be writable too.
    const writable = value("ReadWritePaths").split(/\s+/);
    for (const allow of settings.allow as string[])
      if (allow.startsWith("file://"))
        expect(
          writable.some((w) => new URL(allow).pathname.startsWith(w)),
          `${allow} in ReadWritePaths`,
        ).toBe(true);
    // systemd may stop it only after the drain had its time.
    expect(Number(value("TimeoutStopSec")) * 1000).toBeGreaterThan(settings.drain_timeout_ms);
  });

  it("restarts on failure but not for a bad configuration or a refused token, and keeps the JIT working", () => {
    expect(value("Restart")).toBe("on-failure");
    expect(value("RestartPreventExitStatus").split(/\s+/).sort()).toEqual(["2", "3"]);
    expect(unit.has("MemoryDenyWriteExecute")).toBe(false);
  });

  it.runIf(onPath("systemd-analyze"))("passes systemd-analyze verify", async () => {
    const dir = join(work, "unit");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "lakesmith-agent.service");
    writeFileSync(file, unitText.replaceAll(INSTALL_PREFIX, prefix));
    const { stdout, stderr } = await run("systemd-analyze", ["verify", file]);
    expect(`${stdout}${stderr}`.trim()).toBe("");
  });
});
