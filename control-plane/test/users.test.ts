import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UserSchema, type UserWire } from "../src/users/schemas.ts";
import { ADMIN_KEY, ADMIN_PASSWORD, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

const admin = (method: string, path: string, body?: unknown) =>
  plane.call(method, path, { token: ADMIN_KEY, ...(body !== undefined ? { body } : {}) });

async function adminByName(username: string) {
  const list = await (await admin("GET", "/api/v1/users?limit=1000")).json();
  return list.items.find((u: { username: string }) => u.username === username);
}

describe("creating users", () => {
  it("creates a password user and never returns the password", async () => {
    const res = await admin("POST", "/api/v1/users", {
      full_name: "Grace Hopper",
      username: "grace",
      email: "Grace@Example.com",
      password: "cobol-forever",
      role: "Editor",
    });
    expect(res.status).toBe(201);
    const user = await res.json();
    expect(user).toMatchObject({
      full_name: "Grace Hopper",
      username: "grace",
      email: "grace@example.com",
      role: "Editor",
      auth_type: "password",
      status: "active",
      last_login_at: null,
    });
    expect(JSON.stringify(user)).not.toContain("cobol-forever");
    expect(user).not.toHaveProperty("password");
    expect((await plane.login("grace", "cobol-forever")).access_token).toBeTruthy();
  });

  it("creates SSO users with the username from the email's local part and no password", async () => {
    for (const auth_type of ["oidc", "saml"]) {
      const res = await admin("POST", "/api/v1/users", {
        full_name: "Alan Turing",
        email: `alan.${auth_type}@example.com`,
        role: "Viewer",
        auth_type,
      });
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ username: `alan.${auth_type}`, auth_type });
    }
    const login = await plane.call("POST", "/api/v1/auth/login", {
      body: { username: "alan.oidc", password: "x" },
    });
    expect(login.status).toBe(401);
  });

  it("refuses a password for an SSO user and a password user without one", async () => {
    const sso = await admin("POST", "/api/v1/users", {
      full_name: "X",
      email: "x@example.com",
      role: "Viewer",
      auth_type: "saml",
      password: "secret-123",
    });
    expect(sso.status).toBe(422);
    expect((await sso.json()).errors.map((e: { path: string }) => e.path)).toEqual(["password"]);
    const local = await admin("POST", "/api/v1/users", {
      full_name: "Y",
      email: "y@example.com",
      role: "Viewer",
      username: "y",
    });
    expect(local.status).toBe(422);
    expect((await local.json()).errors.map((e: { path: string }) => e.path)).toEqual(["password"]);
  });

  it("answers 409 for a duplicate username or email, case-insensitively for email", async () => {
    const base = { full_name: "Dup", password: "dup-password", role: "Viewer" };
    expect(
      (await admin("POST", "/api/v1/users", { ...base, username: "dup", email: "dup@example.com" })).status,
    ).toBe(201);
    const sameName = await admin("POST", "/api/v1/users", {
      ...base,
      username: "dup",
      email: "other@example.com",
    });
    expect(sameName.status).toBe(409);
    expect((await sameName.json()).errors[0].path).toBe("username");
    const sameEmail = await admin("POST", "/api/v1/users", {
      ...base,
      username: "dup2",
      email: "DUP@example.com",
    });
    expect(sameEmail.status).toBe(409);
    expect((await sameEmail.json()).errors[0].path).toBe("email");
  });

  it("names every invalid field with 422", async () => {
    const res = await admin("POST", "/api/v1/users", {
      full_name: "",
      username: "bad name",
      email: "nope",
      password: "x",
      role: "God",
    });
    expect(res.status).toBe(422);
    const paths = (await res.json()).errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(["email", "full_name", "password", "role", "username"]);
  });
});

describe("bulk SSO creation from CSV", () => {
  it("creates the valid rows, reports the failed ones, and accepts columns in any order", async () => {
    await admin("POST", "/api/v1/users", {
      full_name: "Existing",
      email: "existing@corp.com",
      role: "Viewer",
      auth_type: "oidc",
    });
    const csv = [
      "email,department,full_name",
      "ann@corp.com,eng,Ann Smith",
      "existing@corp.com,eng,Someone Else",
      "not-an-email,eng,Broken Row",
      '"bob@corp.com",ops,"Bob, Jr."',
    ].join("\n");
    const res = await admin("POST", "/api/v1/users/bulk", { csv, auth_type: "saml", role: "Editor" });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.created.map((u: { username: string }) => u.username)).toEqual(["ann", "bob"]);
    expect(body.created[1]).toMatchObject({ full_name: "Bob, Jr.", role: "Editor", auth_type: "saml" });
    expect(body.failed).toEqual([
      { row: 2, email: "existing@corp.com", errors: [{ path: "email", message: "already exists" }] },
      { row: 3, email: "not-an-email", errors: [expect.objectContaining({ path: "email" })] },
    ]);
  });

  it("refuses a CSV whose header lacks full_name or email with 422 on csv", async () => {
    const res = await admin("POST", "/api/v1/users/bulk", {
      csv: "name,mail\nA,a@b.com",
      auth_type: "oidc",
      role: "Viewer",
    });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.errors[0].path).toBe("csv");
    expect(body.detail).toContain("full_name and email");
  });
});

describe("status, roles and deletion", () => {
  it("deactivation blocks login and stops existing tokens; activation restores them", async () => {
    const user = await plane.userWithRole("Editor");
    const off = await admin("PATCH", `/api/v1/users/${user.id}`, { status: "inactive" });
    expect(off.status).toBe(200);
    expect((await off.json()).status).toBe("inactive");
    expect((await plane.call("GET", "/api/v1/config", { token: user.token })).status).toBe(401);
    const login = await plane.call("POST", "/api/v1/auth/login", {
      body: { username: user.username, password: user.password },
    });
    expect(login.status).toBe(401);
    expect(
      (await plane.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: user.refresh } })).status,
    ).toBe(401);
    await admin("PATCH", `/api/v1/users/${user.id}`, { status: "active" });
    expect((await plane.call("GET", "/api/v1/config", { token: user.token })).status).toBe(200);
  });

  it("a role change applies to the next request", async () => {
    const user = await plane.userWithRole("Viewer");
    const body = { cloud_discount_percent: 5 };
    expect((await plane.call("PUT", "/api/v1/config", { token: user.token, body })).status).toBe(403);
    await admin("PATCH", `/api/v1/users/${user.id}`, { role: "Admin" });
    expect((await plane.call("PUT", "/api/v1/config", { token: user.token, body })).status).toBe(200);
  });

  it("lists cumulative roles and revokes down to the role below", async () => {
    const user = await plane.userWithRole("Admin");
    const roles = await (await admin("GET", `/api/v1/users/${user.id}/roles`)).json();
    expect(roles).toEqual({ user_id: user.id, role: "Admin", roles: ["Viewer", "Editor", "Admin"] });
    const revoked = await admin("DELETE", `/api/v1/users/${user.id}/roles`, { roles: ["Editor"] });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toEqual({ user_id: user.id, role: "Viewer", roles: ["Viewer"] });
    const viewer = await admin("DELETE", `/api/v1/users/${user.id}/roles`, { roles: ["Viewer"] });
    expect(viewer.status).toBe(422);
  });

  it("protects the built-in and break-glass admins", async () => {
    for (const username of ["admin", "breakglass"]) {
      const user = await adminByName(username);
      expect(user.protected).toBe(true);
      expect((await admin("DELETE", `/api/v1/users/${user.id}`)).status).toBe(409);
      expect((await admin("PATCH", `/api/v1/users/${user.id}`, { status: "inactive" })).status).toBe(409);
      expect((await admin("PATCH", `/api/v1/users/${user.id}`, { role: "Viewer" })).status).toBe(409);
      expect((await admin("DELETE", `/api/v1/users/${user.id}/roles`, { roles: ["Admin"] })).status).toBe(
        409,
      );
      expect((await admin("GET", `/api/v1/users/${user.id}`)).status).toBe(200);
    }
  });

  it("deletes a user, whose tokens then stop working; unknown ids are 404", async () => {
    const user = await plane.userWithRole("Editor");
    expect((await admin("DELETE", `/api/v1/users/${user.id}`)).status).toBe(204);
    expect((await admin("GET", `/api/v1/users/${user.id}`)).status).toBe(404);
    expect((await admin("DELETE", `/api/v1/users/${user.id}`)).status).toBe(404);
    expect((await plane.call("GET", "/api/v1/health", { token: user.token })).status).toBe(401);
  });

  it("an admin cannot delete or deactivate their own account", async () => {
    const me = await plane.userWithRole("Admin");
    const del = await plane.call("DELETE", `/api/v1/users/${me.id}`, { token: me.token });
    expect(del.status).toBe(409);
    const off = await plane.call("PATCH", `/api/v1/users/${me.id}`, {
      token: me.token,
      body: { status: "inactive" },
    });
    expect(off.status).toBe(409);
  });

  it("changes a password user's password", async () => {
    const user = await plane.userWithRole("Viewer");
    await admin("PATCH", `/api/v1/users/${user.id}`, { password: "brand-new-password" });
    expect((await plane.login(user.username, "brand-new-password")).access_token).toBeTruthy();
  });

  it("pages the user list", async () => {
    const page = await (await admin("GET", "/api/v1/users?offset=1&limit=2")).json();
    expect(page.items).toHaveLength(2);
    expect(page).toMatchObject({ offset: 1, limit: 2 });
    expect(page.total).toBeGreaterThan(2);
    expect((await admin("GET", "/api/v1/users?limit=0")).status).toBe(422);
  });

  it("lists every kind of user exactly as GET /users/{id} shows it, oldest first", async () => {
    // The list's items are JSON made by SQLite (users/view.ts), single users by toWire: the same
    // wire form for protected and plain, password and SSO, active and inactive, logged in or not.
    const sso = await (
      await admin("POST", "/api/v1/users", {
        full_name: 'Zoë "Q" Ünicode \\ ✓',
        email: "zoe.q@example.com",
        role: "Editor",
        auth_type: "saml",
      })
    ).json();
    await admin("PATCH", `/api/v1/users/${sso.id}`, { status: "inactive" });
    await plane.userWithRole("Viewer"); // logs in
    await plane.login("admin", ADMIN_PASSWORD);

    const res = await admin("GET", "/api/v1/users?limit=1000");
    expect(res.headers.get("content-type")).toContain("application/json");
    const page = await res.json();
    expect(page).toMatchObject({ offset: 0, limit: 1000, total: page.items.length });
    for (const item of page.items) {
      expect(item).toEqual(await (await admin("GET", `/api/v1/users/${item.id}`)).json());
      expect(UserSchema.parse(item)).toEqual(item);
    }
    const kinds = page.items.map((u: UserWire) => [
      u.protected,
      u.auth_type,
      u.status,
      u.last_login_at !== null,
    ]);
    expect(kinds).toContainEqual([true, "password", "active", true]);
    expect(kinds).toContainEqual([false, "saml", "inactive", false]);
    expect(kinds).toContainEqual([false, "password", "active", true]);
    const created = page.items.map((u: UserWire) => u.created_at);
    expect(created).toEqual([...created].sort());
    expect((await (await admin("GET", "/api/v1/users?offset=5000")).json()).items).toEqual([]);
  });

  it("keeps a user's list item in step with every change to the user, and drops it once deleted", async () => {
    // The list reads each user's JSON from `wire`, which triggers rewrite (migration 0009): every
    // field of the wire form that can change must show in the list at once.
    const user = await plane.userWithRole("Viewer"); // a password user who has logged in
    const listed = async () => {
      const page = await (await admin("GET", "/api/v1/users?limit=1000")).json();
      return { item: page.items.find((u: UserWire) => u.id === user.id), total: page.total };
    };
    const single = async () => (await admin("GET", `/api/v1/users/${user.id}`)).json();
    const changes: [string, () => Promise<unknown>][] = [
      ["role", () => admin("PATCH", `/api/v1/users/${user.id}`, { role: "Admin" })],
      ["full_name", () => admin("PATCH", `/api/v1/users/${user.id}`, { full_name: 'Ada "Countess" ✓' })],
      ["status", () => admin("PATCH", `/api/v1/users/${user.id}`, { status: "inactive" })],
      ["status", () => admin("PATCH", `/api/v1/users/${user.id}`, { status: "active" })],
      ["role", () => admin("DELETE", `/api/v1/users/${user.id}/roles`, { roles: ["Editor"] })],
      ["last_login_at", () => plane.login(user.username, user.password)],
    ];
    for (const [field, change] of changes) {
      const before = await single();
      await change();
      const after = await single();
      expect(after[field]).not.toEqual(before[field]);
      expect((await listed()).item).toEqual(after);
    }

    const { total } = await listed();
    expect((await admin("DELETE", `/api/v1/users/${user.id}`)).status).toBe(204);
    expect(await listed()).toEqual({ item: undefined, total: total - 1 });
  });
});
