/**
 * Walks every route in the OpenAPI document as anonymous, Viewer, Editor, Admin and a key scoped to
 * `tables:read`, and checks each answer against the access rules of the spec, restated here
 * independently of the code: Viewer reads, Editor writes, Admin manages users, API keys, settings and
 * docs. A route missing from the tables below fails the test, so a new route must state its guard.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { fillPath, type Operation, operationsOf } from "./openapi-walk.ts";

type Expected = "public" | "authenticated" | "Viewer" | "Editor" | "Admin";

const PUBLIC = [
  /^\/healthz$/,
  /^\/api\/v1\/auth\/(login|refresh|logout)$/,
  // Single sign-on: starting a login, its callback or ACS, the SAML metadata and the code exchange.
  /^\/api\/v1\/auth\/sso\//,
  /^\/docs\/assets\//,
];
const ANY_CREDENTIAL = [/^\/api\/v1\/health$/];
const ADMIN_ONLY = [
  /^\/api\/v1\/users(\/|$)/,
  /^\/api\/v1\/api-keys(\/|$)/,
  // The identity providers are platform configuration: Admins only, reads included.
  /^\/api\/v1\/sso\//,
  // The outbox names who is notified, and reports are sent on an Admin's word: Admins only.
  /^\/api\/v1\/(notifications|reports)(\/|$)/,
  /^\/openapi\.json$/,
  /^\/docs$/,
  /^\/redoc$/,
];
const ADMIN_WRITES = [
  /^\/api\/v1\/config$/,
  /^\/api\/v1\/feature-flags(\/|$)/,
  // Agent tokens are created and revoked by Admins; diagnostic jobs are an Admin's tool.
  /^\/api\/v1\/agents(\/\{id\})?$/,
  /^\/api\/v1\/jobs$/,
  // The emergency stop of a catalog's policies is platform configuration.
  /^\/api\/v1\/catalogs\/[^/]+\/policy-stop$/,
];
/** Routes that take no user credential at all: agents connect with their own token. */
const AGENT_TOKEN_ONLY = [/^\/api\/v1\/agents\/connect$/];

/** Resource group of each path, for API key scopes; first match wins. */
const RESOURCE_GROUPS: [RegExp, string][] = [
  [/^\/api\/v1\/users(\/|$)/, "users"],
  [/^\/api\/v1\/config$/, "config"],
  [/^\/api\/v1\/feature-flags(\/|$)/, "config"],
  [/^\/api\/v1\/sso\//, "config"],
  [/^\/api\/v1\/(notifications|reports)(\/|$)/, "config"],
  [/^\/api\/v1\/tables\/[^/]+\/schedule$/, "schedules"],
  [/^\/api\/v1\/tables\/[^/]+\/crunch$/, "crunch"],
  [/^\/api\/v1\/tables\/[^/]+\/(vacuum|partition-expiration)(\/|$)/, "vacuum"],
  // Hard-delete is the one call that deletes files for good: it needs deletions:write, not vacuum:write.
  [/^\/api\/v1\/vacuum\/hard-delete$/, "deletions"],
  [/^\/api\/v1\/pending-deletions(\/|$)/, "deletions"],
  [/^\/api\/v1\/slots\//, "schedules"],
  [/^\/api\/v1\/catalog-connections(\/|$)/, "connections"],
  [/^\/api\/v1\/catalogs\/[^/]+\/(tables\/[^/]+\/)?(policies|policy-stop)(\/|$)/, "policies"],
  [/^\/api\/v1\/managedtables\/[^/]+\/policies(\/|$)/, "policies"],
  [/^\/api\/v1\/managedtables(\/|$)/, "managed-tables"],
  [/^\/api\/v1\/catalogs(\/|$)/, "catalogs"],
  [/^\/api\/v1\/object-maintenance\//, "object-maintenance"],
  [/^\/api\/v1\/savings(\/|$)/, "savings"],
  [/^\/api\/v1\/metrics(\/|$)/, "metrics"],
  [/^\/api\/v1\/optimus\//, "optimus"],
  [/^\/api\/v1\/(tables|onboarding)(\/|$)/, "tables"],
  [/^\/api\/v1\/api-keys(\/|$)/, "admin"],
  [/^\/api\/v1\/crunch(\/|$)/, "crunch"],
  [/^\/api\/v1\/(agents|jobs)(\/|$)/, "agents"],
  [/^\/(openapi\.json|docs|redoc)$/, "admin"],
];

function expectedRole(op: Operation): Expected {
  if (PUBLIC.some((p) => p.test(op.path))) return "public";
  if (ANY_CREDENTIAL.some((p) => p.test(op.path))) return "authenticated";
  if (ADMIN_ONLY.some((p) => p.test(op.path))) return "Admin";
  if (op.method === "GET") return "Viewer";
  if (ADMIN_WRITES.some((p) => p.test(op.path))) return "Admin";
  return "Editor";
}

function expectedScope(op: Operation): string | undefined {
  const group = RESOURCE_GROUPS.find(([p]) => p.test(op.path))?.[1];
  if (!group) return undefined;
  if (group === "admin") return "admin";
  return `${group}:${op.method === "GET" ? "read" : "write"}`;
}

const RANK = { Viewer: 0, Editor: 1, Admin: 2 } as const;

let plane: TestPlane;
let operations: Operation[];
let agentOnly: Operation[];
let tokens: Record<"Viewer" | "Editor" | "Admin", string>;
let tablesReadKey: string;

beforeAll(async () => {
  plane = await startTestPlane();
  const all = await operationsOf(plane);
  agentOnly = all.filter((op) => AGENT_TOKEN_ONLY.some((p) => p.test(op.path)));
  operations = all.filter((op) => !agentOnly.includes(op));
  tokens = {
    Viewer: (await plane.userWithRole("Viewer")).token,
    Editor: (await plane.userWithRole("Editor")).token,
    Admin: (await plane.userWithRole("Admin")).token,
  };
  tablesReadKey = (await plane.apiKey(["tables:read"])).key;
});
afterAll(() => plane.close());

const send = (op: Operation, token?: string) =>
  plane.call(op.method, fillPath(op.path), { token, ...(op.hasBody ? { body: {} } : {}) });

describe("every route in the OpenAPI document", () => {
  it("has a documented access rule that matches the spec's roles and scopes", () => {
    expect(operations.length).toBeGreaterThan(15);
    for (const op of operations) {
      const name = `${op.method} ${op.path}`;
      const role = expectedRole(op);
      expect(op.access, name).toBeDefined();
      if (role === "public" || role === "authenticated") {
        expect(op.access?.kind, name).toBe(role);
        continue;
      }
      const scope = expectedScope(op);
      expect(scope, `${name}: add it to RESOURCE_GROUPS in this test`).toBeDefined();
      expect(op.access, name).toEqual({ kind: "guarded", role, scope });
    }
  });

  it("answers anonymous callers 401 unless public", async () => {
    for (const op of operations) {
      const res = await send(op);
      const name = `${op.method} ${op.path}`;
      if (expectedRole(op) === "public") expect(res.status, name).not.toBe(401);
      else expect(res.status, name).toBe(401);
    }
  });

  it("lets each role through exactly where the spec allows it", async () => {
    for (const op of operations) {
      const needed = expectedRole(op);
      for (const role of ["Viewer", "Editor", "Admin"] as const) {
        const res = await send(op, tokens[role]);
        const name = `${role} ${op.method} ${op.path}`;
        const allowed = needed === "public" || needed === "authenticated" || RANK[role] >= RANK[needed];
        if (allowed) expect([401, 403], name).not.toContain(res.status);
        else expect(res.status, name).toBe(403);
      }
    }
  });

  it("lets a tables:read key through only to tables reads and open routes", async () => {
    for (const op of operations) {
      const needed = expectedRole(op);
      const res = await send(op, tablesReadKey);
      const name = `${op.method} ${op.path}`;
      const allowed =
        needed === "public" || needed === "authenticated" || expectedScope(op) === "tables:read";
      if (allowed) expect([401, 403], name).not.toContain(res.status);
      else expect(res.status, name).toBe(403);
    }
  });

  it("keeps the agents' socket closed to every user credential", async () => {
    expect(agentOnly.length).toBeGreaterThan(0);
    for (const op of agentOnly) {
      expect(op.access?.kind, op.path).toBe("public");
      for (const token of [undefined, tokens.Viewer, tokens.Admin, tablesReadKey, ADMIN_KEY]) {
        expect((await send(op, token)).status, `${op.method} ${op.path}`).toBe(401);
      }
    }
  });

  it("lets the admin-scoped bootstrap key through everywhere", async () => {
    for (const op of operations) {
      const res = await send(op, ADMIN_KEY);
      expect([401, 403], `${op.method} ${op.path}`).not.toContain(res.status);
    }
  });
});
