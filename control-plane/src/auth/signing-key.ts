/**
 * The HMAC key that signs access tokens. `LAKESMITH_JWT_SECRET` wins when set; otherwise the
 * installation generates one on first use and keeps it in `instance_secrets`, encrypted with the
 * secrets key (`secrets/keyring.ts`), so tokens survive restarts and every replica of the control
 * plane agrees on it. Insert-or-ignore then read makes two replicas racing on an empty database end
 * up with the same key. A row stored in plain text (before encryption existed) is encrypted by the
 * start-up pass (`secrets/stored.ts`) before anything reads it.
 */
import { randomSecret } from "@lakesmith/shared";
import { eq } from "drizzle-orm";
import type { Db } from "../db/index.ts";
import { instanceSecrets } from "../db/schema.ts";
import type { Keyring } from "../secrets/keyring.ts";
import { instanceSecretAad } from "../secrets/stored.ts";

const NAME = "access_token_signing_key";

export function signingKeyLoader(db: Db, secrets: Keyring, override?: string): () => Promise<string> {
  if (override) return () => Promise.resolve(override);
  let cached: Promise<string> | undefined;
  return () => {
    cached ??= load(db, secrets).catch((err) => {
      cached = undefined;
      throw err;
    });
    return cached;
  };
}

async function load(db: Db, secrets: Keyring): Promise<string> {
  const aad = instanceSecretAad(NAME);
  await db
    .insert(instanceSecrets)
    .values({ name: NAME, value: await secrets.encrypt(randomSecret(32), aad) })
    .onConflictDoNothing();
  const [row] = await db.select().from(instanceSecrets).where(eq(instanceSecrets.name, NAME));
  if (!row) throw new Error("access-token signing key could not be stored");
  return secrets.decrypt(row.value, aad);
}
