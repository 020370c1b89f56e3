import { ManualClock } from "@lakesmith/shared";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, ADMIN_PASSWORD, startTestPlane, type TestPlane } from "./harness.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

describe("login", () => {
  it("returns a bearer token pair whose access token opens the API", async () => {
    const res = await plane.call("POST", "/api/v1/auth/login", {
      body: { username: "admin", password: ADMIN_PASSWORD },
    });
    expect(res.status).toBe(200);
    const pair = await res.json();
    expect(pair).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(pair.access_token.split(".")).toHaveLength(3);
    expect(pair.refresh_token).toMatch(/^lsr_/);
    const health = await plane.call("GET", "/api/v1/health", { token: pair.access_token });
    expect(health.status).toBe(200);
  });

  it("rejects a wrong password and an unknown user with the same 401", async () => {
    const wrong = await plane.call("POST", "/api/v1/auth/login", {
      body: { username: "admin", password: "nope-nope" },
    });
    const unknown = await plane.call("POST", "/api/v1/auth/login", {
      body: { username: "ghost", password: "nope-nope" },
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect((await wrong.json()).detail).toBe((await unknown.json()).detail);
  });

  it("records last_login_at", async () => {
    const viewer = await plane.userWithRole("Viewer");
    const res = await plane.call("GET", `/api/v1/users/${viewer.id}`, { token: ADMIN_KEY });
    expect((await res.json()).last_login_at).not.toBeNull();
  });

  it("signs access tokens with the configured TTL", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const claims = JSON.parse(Buffer.from(pair.access_token.split(".")[1] ?? "", "base64url").toString());
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.typ).toBe("access");
  });

  it("rejects a token signed with another key", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const [head, payload] = pair.access_token.split(".");
    const forged = `${head}.${payload}.${"A".repeat(43)}`;
    expect((await plane.call("GET", "/api/v1/health", { token: forged })).status).toBe(401);
  });
});

describe("refresh and logout", () => {
  it("rotates: the new pair works and the old refresh token stops working", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const res = await plane.call("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: pair.refresh_token },
    });
    expect(res.status).toBe(200);
    const next = await res.json();
    expect(next.refresh_token).not.toBe(pair.refresh_token);
    expect((await plane.call("GET", "/api/v1/health", { token: next.access_token })).status).toBe(200);
    const again = await plane.call("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: pair.refresh_token },
    });
    expect(again.status).toBe(401);
  });

  it("revokes every refresh token of the user when a rotated token is replayed", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const next = await (
      await plane.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: pair.refresh_token } })
    ).json();
    await plane.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: pair.refresh_token } });
    const stolen = await plane.call("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: next.refresh_token },
    });
    expect(stolen.status).toBe(401);
  });

  it("lets exactly one of two concurrent refreshes with the same token win", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const results = await Promise.all(
      [0, 1].map(() =>
        plane.call("POST", "/api/v1/auth/refresh", { body: { refresh_token: pair.refresh_token } }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("logout revokes the refresh token and is idempotent", async () => {
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    expect(
      (await plane.call("POST", "/api/v1/auth/logout", { body: { refresh_token: pair.refresh_token } }))
        .status,
    ).toBe(204);
    expect(
      (await plane.call("POST", "/api/v1/auth/logout", { body: { refresh_token: pair.refresh_token } }))
        .status,
    ).toBe(204);
    const res = await plane.call("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: pair.refresh_token },
    });
    expect(res.status).toBe(401);
  });

  it("refuses a refresh token after its lifetime", async () => {
    const clock = new ManualClock(new Date());
    const timed = await startTestPlane({ clock });
    try {
      const pair = await timed.login("admin", ADMIN_PASSWORD);
      clock.advance(604_800_000);
      const res = await timed.call("POST", "/api/v1/auth/refresh", {
        body: { refresh_token: pair.refresh_token },
      });
      expect(res.status).toBe(401);
    } finally {
      timed.close();
    }
  });

  it("gives refresh tokens of local users the local TTL", async () => {
    const before = Date.now();
    const pair = await plane.login("admin", ADMIN_PASSWORD);
    const rows = await plane.services.db.query.refreshTokens.findMany();
    const newest = rows.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
    expect(pair.refresh_token).toBeTruthy();
    expect((newest?.expiresAt.getTime() ?? 0) - before).toBeGreaterThanOrEqual(604_800_000 - 5_000);
  });
});

describe("API keys", () => {
  it("shows the secret once and never lists it", async () => {
    const created = await plane.apiKey(["tables:read"]);
    expect(created.key).toMatch(/^lsk_/);
    const list = await (await plane.call("GET", "/api/v1/api-keys", { token: ADMIN_KEY })).json();
    const listed = list.items.find((k: { id: string }) => k.id === created.id);
    expect(listed.scopes).toEqual(["tables:read"]);
    expect(JSON.stringify(list)).not.toContain(created.key);
  });

  it("a key with only tables:read gets 403 on a write", async () => {
    const { key } = await plane.apiKey(["tables:read"]);
    const res = await plane.call("PUT", "/api/v1/config", {
      token: key,
      body: { cloud_discount_percent: 10 },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect((await res.json()).detail).toContain("config:write");
  });

  it("write scope includes read; admin scope includes everything", async () => {
    const writer = await plane.apiKey(["config:write"]);
    expect((await plane.call("GET", "/api/v1/config", { token: writer.key })).status).toBe(200);
    const admin = await plane.apiKey(["admin"]);
    expect((await plane.call("GET", "/api/v1/users", { token: admin.key })).status).toBe(200);
  });

  it("rejects unknown scopes with 422 naming the field", async () => {
    const res = await plane.call("POST", "/api/v1/api-keys", {
      token: ADMIN_KEY,
      body: { name: "x", scopes: ["tables:delete"] },
    });
    expect(res.status).toBe(422);
    expect((await res.json()).errors[0].path).toBe("scopes.0");
  });

  it("stops a deleted key at once", async () => {
    const { id, key } = await plane.apiKey(["config:read"]);
    expect((await plane.call("GET", "/api/v1/config", { token: key })).status).toBe(200);
    expect((await plane.call("DELETE", `/api/v1/api-keys/${id}`, { token: ADMIN_KEY })).status).toBe(204);
    expect((await plane.call("GET", "/api/v1/config", { token: key })).status).toBe(401);
    expect((await plane.call("DELETE", `/api/v1/api-keys/${id}`, { token: ADMIN_KEY })).status).toBe(404);
  });

  it("refuses an expiry in the past", async () => {
    const past = await plane.call("POST", "/api/v1/api-keys", {
      token: ADMIN_KEY,
      body: { name: "old", scopes: ["admin"], expires_at: "2020-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(422);
    expect((await past.json()).errors[0].path).toBe("expires_at");
  });

  it("stops a key at its expiry", async () => {
    const clock = new ManualClock(new Date());
    const timed = await startTestPlane({ clock });
    try {
      const expiresAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
      const res = await timed.call("POST", "/api/v1/api-keys", {
        token: ADMIN_KEY,
        body: { name: "hour", scopes: ["admin"], expires_at: expiresAt },
      });
      const { key } = await res.json();
      expect((await timed.call("GET", "/api/v1/health", { token: key })).status).toBe(200);
      clock.advance(3_600_000);
      const expired = await timed.call("GET", "/api/v1/health", { token: key });
      expect(expired.status).toBe(401);
      expect((await expired.json()).detail).toContain("expired");
    } finally {
      timed.close();
    }
  });

  it("ends an access token at its expiry by the service's clock", async () => {
    const clock = new ManualClock(new Date("2030-06-01T00:00:00Z"));
    const timed = await startTestPlane({ clock });
    try {
      const { access_token, expires_in } = await timed.login("admin", ADMIN_PASSWORD);
      expect((await timed.call("GET", "/api/v1/health", { token: access_token })).status).toBe(200);
      clock.advance(expires_in * 1000 - 1000);
      expect((await timed.call("GET", "/api/v1/health", { token: access_token })).status).toBe(200);
      clock.advance(1000);
      expect((await timed.call("GET", "/api/v1/health", { token: access_token })).status).toBe(401);
    } finally {
      timed.close();
    }
  });

  it("only Admin may create keys", async () => {
    const editor = await plane.userWithRole("Editor");
    const res = await plane.call("POST", "/api/v1/api-keys", {
      token: editor.token,
      body: { name: "x", scopes: ["admin"] },
    });
    expect(res.status).toBe(403);
  });
});

describe("credentials on the wire", () => {
  it("answers 401 with a Bearer challenge when no credential is sent", async () => {
    const res = await plane.call("GET", "/api/v1/config");
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain("Bearer");
  });

  it("answers 401 to a malformed Authorization header", async () => {
    for (const header of ["Basic abc", "Bearer", "Bearer a b", "bearer"]) {
      const res = await plane.call("GET", "/api/v1/config", { headers: { authorization: header } });
      expect(res.status, header).toBe(401);
    }
  });
});
