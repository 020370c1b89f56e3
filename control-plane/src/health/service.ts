/** Component health: today the database, which every request depends on. */
import { sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";

export interface ComponentHealth {
  status: "ok" | "unavailable";
  latency_ms: number;
  detail?: string;
}

export class HealthService {
  constructor(private readonly db: Db) {}

  async database(): Promise<ComponentHealth> {
    const started = performance.now();
    try {
      await this.db.run(sql`select 1`);
      return { status: "ok", latency_ms: round(performance.now() - started) };
    } catch (err) {
      return {
        status: "unavailable",
        latency_ms: round(performance.now() - started),
        detail: (err as Error).message,
      };
    }
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100;
