/**
 * Structured JSON logs (pino) on stdout, one object a line, with ISO timestamps; the token never
 * appears because no log call is given the configuration whole.
 */
import { type Logger, pino } from "pino";
import type { AgentConfig } from "./config.ts";

/** The process logger of one agent. */
export function createLogger(config: Pick<AgentConfig, "log_level" | "name">): Logger {
  return pino({
    level: config.log_level,
    base: { agent: config.name, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
