/**
 * Every place the control plane keeps a secret in the database, each value's name (the additional
 * authenticated data it is encrypted under), and the start-up pass that brings them all to the
 * current key. A new kind of secret (identity-provider secrets, say) adds its place
 * to `SECRET_PLACES` and is rotated with the rest.
 *
 * - Re-encrypts every value that is plain text (written before encryption existed) or was written
 *   with a previous key; values under the current key are left alone, so a second run changes nothing.
 * - Each rewrite is a conditional UPDATE on the old value: instances racing at start each rewrite a
 *   value at most once, and a value someone changed meanwhile is kept.
 * - A value under a key that is neither current nor previous stops the start with the key's id.
 */
import { and, eq, inArray } from "drizzle-orm";
import { SECRET_SETTING_KEYS } from "../config/definitions.ts";
import type { Db } from "../db/index.ts";
import {
  catalogConnections,
  instanceSecrets,
  type SsoProtocol,
  settings,
  ssoProviders,
} from "../db/schema.ts";
import { isEnvelope, type Keyring } from "./keyring.ts";

/** The name a row of `instance_secrets` is encrypted under. */
export const instanceSecretAad = (name: string) => `instance_secrets/${name}`;
/** The name a secret setting's value (its whole JSON) is encrypted under. */
export const settingAad = (key: string) => `settings/${key}`;
/** The name a catalog connection's secret fields (one JSON object) are encrypted under. */
export const catalogConnectionAad = (id: string) => `catalog_connections/${id}`;
/** The name an identity provider's secret (the OIDC client secret) is encrypted under. */
export const ssoProviderAad = (protocol: string) => `sso_providers/${protocol}`;

interface StoredSecret {
  id: string;
  value: string;
  aad: string;
}

interface SecretPlace {
  /** Every secret stored in this place. */
  list(db: Db): Promise<StoredSecret[]>;
  /** Replaces `from` by `to` if the value is still `from`; whether it did. */
  replace(db: Db, id: string, from: string, to: string): Promise<boolean>;
}

export const SECRET_PLACES: readonly SecretPlace[] = [
  {
    // Every row is a secret: the access-token signing key, and whatever instance-wide key comes next.
    async list(db) {
      const rows = await db.select().from(instanceSecrets);
      return rows.map((r) => ({ id: r.name, value: r.value, aad: instanceSecretAad(r.name) }));
    },
    async replace(db, id, from, to) {
      const changed = await db
        .update(instanceSecrets)
        .set({ value: to })
        .where(and(eq(instanceSecrets.name, id), eq(instanceSecrets.value, from)))
        .returning({ name: instanceSecrets.name });
      return changed.length > 0;
    },
  },
  {
    // Settings marked `secret: true` in config/definitions.ts.
    async list(db) {
      if (SECRET_SETTING_KEYS.length === 0) return [];
      const rows = await db.select().from(settings).where(inArray(settings.key, SECRET_SETTING_KEYS));
      return rows.map((r) => ({ id: r.key, value: r.value, aad: settingAad(r.key) }));
    },
    async replace(db, id, from, to) {
      const changed = await db
        .update(settings)
        .set({ value: to })
        .where(and(eq(settings.key, id), eq(settings.value, from)))
        .returning({ key: settings.key });
      return changed.length > 0;
    },
  },
  {
    // Catalog connections' credentials (`catalog-connections/credentials.ts`).
    async list(db) {
      const rows = await db
        .select({ id: catalogConnections.id, secrets: catalogConnections.secrets })
        .from(catalogConnections);
      return rows.map((r) => ({ id: r.id, value: r.secrets, aad: catalogConnectionAad(r.id) }));
    },
    async replace(db, id, from, to) {
      const changed = await db
        .update(catalogConnections)
        .set({ secrets: to })
        .where(and(eq(catalogConnections.id, id), eq(catalogConnections.secrets, from)))
        .returning({ id: catalogConnections.id });
      return changed.length > 0;
    },
  },
  {
    // Identity providers' secrets (`sso/providers.ts`).
    async list(db) {
      const rows = await db
        .select({ protocol: ssoProviders.protocol, secret: ssoProviders.secret })
        .from(ssoProviders);
      return rows.flatMap((r) =>
        r.secret ? [{ id: r.protocol, value: r.secret, aad: ssoProviderAad(r.protocol) }] : [],
      );
    },
    async replace(db, id, from, to) {
      const changed = await db
        .update(ssoProviders)
        .set({ secret: to })
        .where(and(eq(ssoProviders.protocol, id as SsoProtocol), eq(ssoProviders.secret, from)))
        .returning({ protocol: ssoProviders.protocol });
      return changed.length > 0;
    },
  },
];

/** Brings every stored secret to the current key; returns how many values it rewrote. */
export async function reencryptStoredSecrets(db: Db, keyring: Keyring): Promise<number> {
  let rewritten = 0;
  for (const place of SECRET_PLACES) {
    for (const secret of await place.list(db)) {
      if (await keyring.isCurrent(secret.value)) continue;
      const plaintext = isEnvelope(secret.value)
        ? await keyring.decrypt(secret.value, secret.aad)
        : secret.value;
      const next = await keyring.encrypt(plaintext, secret.aad);
      if (await place.replace(db, secret.id, secret.value, next)) rewritten++;
    }
  }
  return rewritten;
}
