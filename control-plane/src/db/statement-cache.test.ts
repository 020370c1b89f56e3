import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { asc, eq, sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { type NodeDatabase, openNodeDatabase } from "../adapter/node-db.ts";
import { apiKeys, users } from "./schema.ts";
import { preparedSelect, type StatementCache, selectOnce, useStatementCache } from "./statement-cache.ts";

const opened: { database: NodeDatabase; dir?: string }[] = [];

afterEach(() => {
  for (const { database, dir } of opened.splice(0)) {
    database.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
});

/** A fresh database file whose reads go through its statement cache; `served` lists their SQL. */
async function fileDatabase() {
  const dir = mkdtempSync(join(tmpdir(), "lakesmith-statements-"));
  const database = await openNodeDatabase(`file:${join(dir, "test.db")}`);
  opened.push({ database, dir });
  const statements = database.statements as StatementCache;
  const served: string[] = [];
  useStatementCache(database.db, {
    rows(text, params) {
      served.push(text);
      return statements.rows(text, params);
    },
  });
  return { db: database.db, served };
}

const created = new Date("2026-03-01T12:00:00.123Z");

async function seed(db: NodeDatabase["db"]) {
  await db.insert(users).values([
    {
      id: "usr_a",
      username: "ada",
      email: "ada@example.com",
      fullName: "Ada",
      passwordHash: null,
      role: "Admin",
      authType: "oidc",
      status: "active",
      protected: true,
      createdAt: created,
    },
    {
      id: "usr_b",
      username: "bob",
      email: "bob@example.com",
      fullName: "Bob",
      passwordHash: "pbkdf2$x",
      role: "Viewer",
      authType: "password",
      status: "inactive",
      protected: false,
      lastLoginAt: new Date(created.getTime() + 1),
      createdAt: created,
    },
  ]);
  await db.insert(apiKeys).values({
    id: "key_a",
    name: "ci",
    keyHash: "hash-a",
    prefix: "lsk_abc",
    scopes: ["tables:read", "admin"],
    expiresAt: new Date(created.getTime() + 86_400_000),
    createdAt: created,
  });
}

describe("preparedSelect", () => {
  it("maps rows from the cache as drizzle does: dates, booleans, JSON and nulls", async () => {
    const { db, served } = await fileDatabase();
    await seed(db);
    const allUsers = preparedSelect(db, db.select().from(users).orderBy(asc(users.id)));
    const keyByHash = preparedSelect(
      db,
      db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, sql.placeholder("hash"))),
    );

    const rows = await allUsers.all();
    expect(rows).toEqual(await db.select().from(users).orderBy(asc(users.id)));
    expect(rows[0]?.createdAt).toEqual(created);
    expect(rows[0]?.protected).toBe(true);
    expect(rows[0]?.lastLoginAt).toBeNull();
    const key = await keyByHash.get({ hash: "hash-a" });
    expect(key?.scopes).toEqual(["tables:read", "admin"]);
    expect(key?.expiresAt).toEqual(new Date(created.getTime() + 86_400_000));
    expect(await keyByHash.get({ hash: "no-such-hash" })).toBeUndefined();
    expect(served).toHaveLength(3);
  });

  it("sees every committed write at once: an insert, an update and a delete", async () => {
    const { db } = await fileDatabase();
    const byId = preparedSelect(
      db,
      db
        .select({ status: users.status })
        .from(users)
        .where(eq(users.id, sql.placeholder("id"))),
    );
    expect(await byId.get({ id: "usr_a" })).toBeUndefined();
    await seed(db);
    expect(await byId.get({ id: "usr_a" })).toEqual({ status: "active" });
    await db.update(users).set({ status: "inactive" }).where(eq(users.id, "usr_a"));
    expect(await byId.get({ id: "usr_a" })).toEqual({ status: "inactive" });
    await db.delete(users).where(eq(users.id, "usr_a"));
    expect(await byId.get({ id: "usr_a" })).toBeUndefined();
  });

  it("leaves no read open after a first row: another statement then sees a later write", async () => {
    const { db } = await fileDatabase();
    await seed(db);
    const anyUser = preparedSelect(db, db.select({ id: users.id }).from(users).orderBy(asc(users.id)));
    const statusOf = preparedSelect(
      db,
      db
        .select({ status: users.status })
        .from(users)
        .where(eq(users.id, sql.placeholder("id"))),
    );
    expect(await anyUser.get()).toEqual({ id: "usr_a" });
    await db.update(users).set({ status: "inactive" }).where(eq(users.id, "usr_a"));
    expect(await statusOf.get({ id: "usr_a" })).toEqual({ status: "inactive" });
  });

  it("fills limit and offset placeholders", async () => {
    const { db } = await fileDatabase();
    await seed(db);
    const page = preparedSelect(
      db,
      db
        .select({ id: users.id })
        .from(users)
        .orderBy(asc(users.id))
        .limit(sql.placeholder("limit"))
        .offset(sql.placeholder("offset")),
    );
    expect(await page.all({ limit: 1, offset: 1 })).toEqual([{ id: "usr_b" }]);
    expect(await page.all({ limit: 10, offset: 2 })).toEqual([]);
  });

  it("runs through drizzle's own prepared query where the database has no cache", async () => {
    const database = await openNodeDatabase("file::memory:");
    opened.push({ database });
    expect(database.statements).toBeUndefined();
    const { db } = database;
    await seed(db);
    const byId = preparedSelect(
      db,
      db
        .select()
        .from(users)
        .where(eq(users.id, sql.placeholder("id"))),
    );
    expect(await byId.get({ id: "usr_b" })).toEqual(
      (await db.select().from(users).where(eq(users.id, "usr_b")))[0],
    );
  });
});

describe("selectOnce", () => {
  it("reads through the connection's one-off path, never the kept statements, and maps fields in select order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lakesmith-statements-"));
    const database = await openNodeDatabase(`file:${join(dir, "test.db")}`);
    opened.push({ database, dir });
    const statements = database.statements as StatementCache;
    const kept: string[] = [];
    const once: string[] = [];
    useStatementCache(database.db, {
      rows(text, params) {
        kept.push(text);
        return statements.rows(text, params);
      },
      once(text, params) {
        once.push(text);
        return statements.once?.(text, params) ?? [];
      },
    });
    await seed(database.db);
    const names = (role: "Admin" | "Viewer") =>
      selectOnce(
        database.db,
        database.db
          .select({ n: sql<number>`count(*)`, names: sql<string>`group_concat(${users.username})` })
          .from(users)
          .where(eq(users.role, role)),
        ["n", "names"],
      );
    expect(await names("Admin")).toEqual({ n: 1, names: "ada" });
    expect(await names("Viewer")).toEqual({ n: 1, names: "bob" });
    expect(once).toHaveLength(2);
    expect(kept).toEqual([]);
  });

  it("runs the query itself where the database has no cache", async () => {
    const database = await openNodeDatabase("file::memory:");
    opened.push({ database });
    await seed(database.db);
    const row = await selectOnce(database.db, database.db.select({ n: sql<number>`count(*)` }).from(users), [
      "n",
    ]);
    expect(row).toEqual({ n: 2 });
  });
});
