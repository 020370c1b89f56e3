/** Feature flags: a key and a boolean; a flag that was never set is disabled. */
import type { Clock } from "@lakesmith/shared";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { featureFlags } from "../db/schema.ts";

export interface FeatureFlag {
  key: string;
  enabled: boolean;
  updated_at: string | null;
}

export class FeatureFlagService {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async get(key: string): Promise<FeatureFlag> {
    const [row] = await this.db.select().from(featureFlags).where(eq(featureFlags.key, key));
    return { key, enabled: row?.enabled ?? false, updated_at: row?.updatedAt.toISOString() ?? null };
  }

  async list(): Promise<FeatureFlag[]> {
    const rows = await this.db.select().from(featureFlags).orderBy(featureFlags.key);
    return rows.map((r) => ({ key: r.key, enabled: r.enabled, updated_at: r.updatedAt.toISOString() }));
  }

  async set(key: string, enabled: boolean): Promise<FeatureFlag> {
    const now = this.clock.now();
    await this.db
      .insert(featureFlags)
      .values({ key, enabled, updatedAt: now })
      .onConflictDoUpdate({
        target: featureFlags.key,
        set: { enabled: sql`excluded.enabled`, updatedAt: now },
      });
    return { key, enabled, updated_at: now.toISOString() };
  }
}
