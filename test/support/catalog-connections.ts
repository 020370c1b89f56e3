/**
 * Checks every catalog connection end-to-end test ends with: a secret is in no API answer and in
 * no row of the tables that could hold it, and deleting a connection needs `confirm=true`.
 */
import { createClient } from "@libsql/client";
import { expect } from "vitest";
import type { TestPlane } from "./plane.ts";

/** `secret` is in none of `answers` and in no row of `tables` (plain text). */
export async function expectSecretNowhere(
  plane: TestPlane,
  secret: string,
  answers: unknown[],
  tables: string[] = ["catalog_connections", "jobs"],
): Promise<void> {
  expect(JSON.stringify(answers)).not.toContain(secret);
  const db = createClient({ url: plane.dbUrl });
  try {
    for (const table of tables) {
      const rows = await db.execute(`select * from ${table}`);
      expect(JSON.stringify(rows.rows), table).not.toContain(secret);
    }
  } finally {
    db.close();
  }
}

/** A delete without `confirm=true` is a 422 naming it; with it, the connection is gone. */
export async function expectConfirmedDelete(plane: TestPlane, id: string): Promise<void> {
  const refused = await plane.api("DELETE", `/api/v1/catalog-connections/${id}`);
  expect(refused.status).toBe(422);
  expect(JSON.stringify(refused.body)).toContain("confirm");
  expect((await plane.api("DELETE", `/api/v1/catalog-connections/${id}?confirm=true`)).status).toBe(204);
  expect((await plane.api("GET", `/api/v1/catalog-connections/${id}`)).status).toBe(404);
}
