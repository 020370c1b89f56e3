/**
 * The wire form of a user (`UserSchema`) as JSON text made by SQLite, for the list: a page is then
 * one text to read instead of ten columns of every user, which was most of a `GET /users` request
 * with the libSQL driver (see docs/benchmarks.md). Single users keep `toWire`; a test compares the
 * two on every kind of user and after every kind of change, so the two mappings can't drift apart.
 *
 * The JSON is not built here but read: each row carries it in `wire`, copied by triggers from the
 * view `user_wire` (migration 0009), which defines it, whenever one of its fields changes. Building
 * it on every read (`json_object` and two timestamps per user) was most of a page's SQL time.
 */
import { type SQL, sql } from "drizzle-orm";
import { users } from "../db/schema.ts";

/** One row of `users` as the JSON text of its `UserSchema`, keys in `toWire`'s order. */
export const userJson: SQL<string> = sql<string>`${users.wire}`;
