/** Feature flags: a key and a boolean; a flag that was never set is disabled. */
import type { Clock } from "@lakesmith/shared";
import { eq, sql } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { featureFlags } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";

export interface FeatureFlag {
  key: string;
  enabled: boolean;
  updated_at: string | null;
}

export class FeatureFlagService {
  // Reads built once and kept prepared (`db/statement-cache.ts`).
  private readonly reads;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.reads = {
      byKey: preparedSelect(
        db,
        db
          .select()
          .from(featureFlags)
          .where(eq(featureFlags.key, sql.placeholder("key"))),
      ),
      all: preparedSelect(db, db.select().from(featureFlags).orderBy(featureFlags.key)),
    };
  }

  async get(key: string): Promise<FeatureFlag> {
    const row = await this.reads.byKey.get({ key });
    return { key, enabled: row?.enabled ?? false, updated_at: row?.updatedAt.toISOString() ?? null };
  }

  async list(): Promise<FeatureFlag[]> {
    const rows = await this.reads.all.all();
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
