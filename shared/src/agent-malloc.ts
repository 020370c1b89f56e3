/**
 * The glibc malloc settings the agent runs with, wherever it is started: the container image
 * (`agent/Dockerfile`'s ENV), the systemd unit (`docs/agent-install.md`) and `npm start`'s local agent
 * set these; `test/agent-package.test.ts` checks the first two against this list.
 *
 * - `MALLOC_MMAP_THRESHOLD_`: fixed. By default every large block freed raises it, and the blocks
 *   below it then come from the threads' arenas, which keep them: job after job of reading Spark
 *   logs, the agent's peak crept from 377 to 555-570 MB; fixed, 365-384 MB, at the same speed.
 * - `MALLOC_ARENA_MAX`: two arenas for all threads instead of up to 8 a core.
 *
 * glibc reads them when the process starts: they go in the environment that starts the agent.
 */
export const AGENT_MALLOC_ENV = {
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "131072",
} as const;
