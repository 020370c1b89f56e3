/**
 * The wire form of a user (`UserSchema`) as JSON text made by SQLite, for the list: a page is then
 * one text to read instead of ten columns of every user, which was most of a `GET /users` request
 * with the libSQL driver (see docs/benchmarks.md). Single users keep `toWire`; a test compares the
 * two on every kind of user, so the two mappings can't drift apart.
 */
import { type SQL, sql } from "drizzle-orm";
import { isoText } from "../db/json-text.ts";
import { users } from "../db/schema.ts";

/** One row of `users` as the JSON text of its `UserSchema`, keys in `toWire`'s order. */
export const userJson: SQL<string> = sql<string>`json_object(
  'id', ${users.id},
  'full_name', ${users.fullName},
  'username', ${users.username},
  'email', ${users.email},
  'role', ${users.role},
  'auth_type', ${users.authType},
  'status', ${users.status},
  'protected', iif(${users.protected}, json('true'), json('false')),
  'last_login_at', ${isoText(users.lastLoginAt)},
  'created_at', ${isoText(users.createdAt)})`;
