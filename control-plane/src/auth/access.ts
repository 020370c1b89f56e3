/**
 * Who may call what. Every route declares an `Access` (see `http/route.ts`); the guard middleware
 * checks the caller's principal against it. Users are checked by role, API keys by scope.
 *
 * Scopes are `<resource>:read` and `<resource>:write` per resource group, plus `admin`.
 * `<resource>:write` includes `<resource>:read`; `admin` includes everything.
 */
import type { Role } from "../db/schema.ts";

export const RESOURCE_GROUPS = [
  "tables",
  "schedules",
  "crunch",
  "vacuum",
  "deletions",
  "catalogs",
  "connections",
  "policies",
  "managed-tables",
  "optimus",
  "object-maintenance",
  "users",
  "config",
  "agents",
  "savings",
  "metrics",
] as const;
export type ResourceGroup = (typeof RESOURCE_GROUPS)[number];
export type Scope = `${ResourceGroup}:${"read" | "write"}` | "admin";

export const ALL_SCOPES: readonly Scope[] = [
  ...RESOURCE_GROUPS.flatMap((r) => [`${r}:read` as const, `${r}:write` as const]),
  "admin",
];

export function isScope(value: string): value is Scope {
  return (ALL_SCOPES as readonly string[]).includes(value);
}

/**
 * What a route needs. `public` routes take no credential. `authenticated` routes take any valid
 * credential. Otherwise a user needs at least `role` and an API key needs `scope`.
 */
export type Access =
  | { kind: "public" }
  | { kind: "authenticated" }
  | { kind: "guarded"; role: Role; scope: Scope };

export const access = {
  public: { kind: "public" } as Access,
  authenticated: { kind: "authenticated" } as Access,
  /** Viewer may read; a key needs `<resource>:read`. */
  read: (resource: ResourceGroup): Access => ({ kind: "guarded", role: "Viewer", scope: `${resource}:read` }),
  /** Editor may write; a key needs `<resource>:write`. */
  write: (resource: ResourceGroup): Access => ({
    kind: "guarded",
    role: "Editor",
    scope: `${resource}:write`,
  }),
  /** Admin only; a key needs the given scope (default `admin`). */
  admin: (scope: Scope = "admin"): Access => ({ kind: "guarded", role: "Admin", scope }),
};

export type Principal =
  | { kind: "user"; userId: string; username: string; role: Role }
  | { kind: "api_key"; keyId: string; scopes: Scope[] };

/** The id recorded as the actor of a change: the user's id or the API key's id. */
export function principalId(principal: Principal): string {
  return principal.kind === "user" ? principal.userId : principal.keyId;
}

const ROLE_RANK: Record<Role, number> = { Viewer: 0, Editor: 1, Admin: 2 };

export function roleAtLeast(role: Role, needed: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}

export function scopeGrants(held: readonly Scope[], needed: Scope): boolean {
  if (held.includes("admin") || held.includes(needed)) return true;
  if (needed.endsWith(":read")) return held.includes(needed.replace(/:read$/, ":write") as Scope);
  return false;
}

/** Whether the principal may use a route with this access; `public` routes need no principal. */
export function isAllowed(principal: Principal, required: Access): boolean {
  if (required.kind !== "guarded") return true;
  return principal.kind === "user"
    ? roleAtLeast(principal.role, required.role)
    : scopeGrants(principal.scopes, required.scope);
}

export function describeAccess(required: Access): string {
  if (required.kind === "public") return "No credential needed.";
  if (required.kind === "authenticated") return "Any valid credential.";
  return `Role ${required.role} or above; API keys need scope \`${required.scope}\`.`;
}
