/**
 * API keys: named bearer credentials with explicit scopes, created by an Admin. The key
 * (`lsk_<random>`) is returned once; only its SHA-256 is stored.
 */
import { type Clock, newId, randomSecret } from "@lakesmith/shared";
import { desc, eq } from "drizzle-orm";
import type { Scope } from "../auth/access.ts";
import { sha256Hex } from "../auth/crypto.ts";
import { API_KEY_PREFIX } from "../auth/service.ts";
import type { Db } from "../db/index.ts";
import { type ApiKey, apiKeys } from "../db/schema.ts";
import { preparedSelect } from "../db/statement-cache.ts";
import { invalidField, notFound } from "../http/problem.ts";

export interface NewApiKey {
  name: string;
  scopes: Scope[];
  expiresAt?: Date | undefined;
  createdBy: string | null;
  /** Use this secret instead of a random one (the first-start admin key from the environment). */
  secret?: string;
}

export class ApiKeyService {
  private readonly all;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Called after a key is deleted, so cached authentications of it are dropped. */
    private readonly onAccessChange: () => void = () => {},
  ) {
    this.all = preparedSelect(db, db.select().from(apiKeys).orderBy(desc(apiKeys.createdAt), apiKeys.id));
  }

  async create(input: NewApiKey): Promise<{ record: ApiKey; key: string }> {
    if (input.expiresAt && input.expiresAt <= this.clock.now())
      throw invalidField("expires_at", "must be in the future");
    const key = input.secret ?? `${API_KEY_PREFIX}${randomSecret(32)}`;
    const [record] = await this.db
      .insert(apiKeys)
      .values({
        id: newId("key"),
        name: input.name,
        keyHash: await sha256Hex(key),
        prefix: key.slice(0, 10),
        scopes: [...new Set(input.scopes)],
        createdBy: input.createdBy,
        expiresAt: input.expiresAt ?? null,
        createdAt: this.clock.now(),
      })
      .returning();
    if (!record) throw new Error("API key insert returned no row");
    return { record, key };
  }

  list(): Promise<ApiKey[]> {
    return this.all.all();
  }

  async delete(id: string): Promise<void> {
    const deleted = await this.db.delete(apiKeys).where(eq(apiKeys.id, id)).returning({ id: apiKeys.id });
    if (deleted.length === 0) throw notFound("API key", id);
    this.onAccessChange();
  }
}
