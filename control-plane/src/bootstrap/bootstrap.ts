/**
 * First start on an empty database: create the built-in `admin` and the break-glass admin
 * (`breakglass`), both protected, and an Admin API key. Values from the environment are used when
 * given; otherwise they are generated and returned so the entry can print them once.
 *
 * Every start first brings the secrets stored in the database to the current secrets key
 * (`secrets/stored.ts`): plain-text values of older versions and values under a previous key; and
 * gives tables registered before job routing existed their location key.
 *
 * Safe to run on every start and from several replicas at once: only the caller whose insert of
 * `admin` succeeds does the rest.
 */
import { randomSecret } from "@lakesmith/shared";
import { BREAK_GLASS_USERNAME } from "../auth/break-glass.ts";
import { API_KEY_PREFIX } from "../auth/service.ts";
import { ApiError } from "../http/problem.ts";
import { reencryptStoredSecrets } from "../secrets/stored.ts";
import type { Services } from "../services.ts";

export interface BootstrapOptions {
  adminPassword?: string | undefined;
  adminApiKey?: string | undefined;
  breakGlassPassword?: string | undefined;
}

export interface BootstrapResult {
  firstStart: boolean;
  /** How many stored secrets were (re-)encrypted with the current secrets key. */
  reencryptedSecrets: number;
  /** Only the values that were generated, to print once. */
  generated: { adminPassword?: string; breakGlassPassword?: string; adminApiKey?: string };
}

export async function bootstrap(services: Services, options: BootstrapOptions): Promise<BootstrapResult> {
  if (options.adminApiKey && !isValidAdminKey(options.adminApiKey)) {
    throw new Error(
      `LAKESMITH_ADMIN_API_KEY must start with '${API_KEY_PREFIX}' and have at least 32 characters after it`,
    );
  }
  const reencryptedSecrets = await reencryptStoredSecrets(services.db, services.secrets);
  await services.tables.fillLocationKeys();
  if (await services.users.findByUsername("admin")) {
    return { firstStart: false, reencryptedSecrets, generated: {} };
  }

  const generated: BootstrapResult["generated"] = {};
  const adminPassword = options.adminPassword ?? randomSecret(18);
  if (!options.adminPassword) generated.adminPassword = adminPassword;
  try {
    await services.users.create({
      username: "admin",
      full_name: "Built-in admin",
      email: "admin@lakesmith.local",
      password: adminPassword,
      role: "Admin",
      auth_type: "password",
      protected: true,
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      return { firstStart: false, reencryptedSecrets, generated: {} };
    }
    throw err;
  }
  const breakGlassPassword = options.breakGlassPassword ?? randomSecret(24);
  if (!options.breakGlassPassword) generated.breakGlassPassword = breakGlassPassword;
  await services.users.create({
    username: BREAK_GLASS_USERNAME,
    full_name: "Break-glass admin",
    email: "breakglass@lakesmith.local",
    password: breakGlassPassword,
    role: "Admin",
    auth_type: "password",
    protected: true,
  });
  const { key } = await services.apiKeys.create({
    name: "bootstrap admin key",
    scopes: ["admin"],
    createdBy: null,
    ...(options.adminApiKey ? { secret: options.adminApiKey } : {}),
  });
  if (!options.adminApiKey) generated.adminApiKey = key;
  return { firstStart: true, reencryptedSecrets, generated };
}

export function isValidAdminKey(key: string): boolean {
  return key.startsWith(API_KEY_PREFIX) && key.length >= API_KEY_PREFIX.length + 32;
}

/** The lines an entry prints once after a first start. */
export function describeGenerated(result: BootstrapResult): string[] {
  const g = result.generated;
  const lines: string[] = [];
  if (g.adminPassword) lines.push(`  admin password:      ${g.adminPassword}`);
  if (g.breakGlassPassword) lines.push(`  breakglass password: ${g.breakGlassPassword}`);
  if (g.adminApiKey) lines.push(`  admin API key:       ${g.adminApiKey}`);
  if (lines.length === 0) return [];
  return ["Lakesmith first start: generated credentials (shown once, store them now):", ...lines];
}
