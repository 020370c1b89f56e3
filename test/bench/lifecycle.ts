/**
 * How the benches start and stop their processes, so that every bench exits on its own and leaves
 * no server and no temporary folder behind.
 *
 * - A bench server makes its folder with `benchFolder` and registers its own shutdown with
 *   `onShutdown`: it runs once, on SIGTERM or SIGINT, or when the bench that started it goes away
 *   (its stdin pipe closes or its IPC channel disconnects), then the folder is removed and the
 *   process exits.
 * - The bench stops a server with `stopProcess`: SIGTERM, then the exit awaited (SIGKILL after
 *   `graceMs`), and it resolves at once for a process that has already exited.
 * - A bench with no server of its own calls `exitOnInterrupt`, so that Ctrl-C still removes its
 *   folders (they are removed at any exit of the process that is not a kill).
 */
import type { ChildProcess } from "node:child_process";
import { fstatSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folders: string[] = [];

/** A fresh folder under the system's temp dir, removed when the process shuts down. */
export function benchFolder(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

function removeFolders(): void {
  for (const dir of folders.splice(0)) rmSync(dir, { recursive: true, force: true });
}
// A last chance for a process that ends without its shutdown (an uncaught error, process.exit).
process.on("exit", removeFolders);

/**
 * Runs `stop` (closing servers and databases) once when this process is told to end or its parent
 * goes away, then removes the bench folders and exits.
 */
export function onShutdown(stop: () => Promise<void> | void): void {
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    Promise.resolve()
      .then(stop)
      .catch((err) => console.error(err))
      .finally(() => {
        removeFolders();
        process.exit(0);
      });
  };
  process.once("SIGTERM", shutdown);
  process.once("SIGINT", shutdown);
  if (process.send) process.once("disconnect", shutdown);
  else if (stdinIsPipe()) process.stdin.once("end", shutdown).resume();
}

/** Whether stdin is a pipe from the parent (not a terminal, and not /dev/null, which ends at once). */
function stdinIsPipe(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/** Exits (removing the bench folders) on SIGINT or SIGTERM instead of dying with the signal. */
export function exitOnInterrupt(): void {
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
}

/** Ends a child process and resolves when it has exited. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}
