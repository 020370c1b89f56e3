/**
 * The server side of `npm run bench:api`: the real control plane app on a fresh embedded libSQL
 * file (with the prepared-statement reader the Node server uses), served by @hono/node-server, with
 * one extra bare Hono route on the same server as the baseline. Seeds users up to BENCH_USERS in
 * all (default 10, the bootstrap's admin and break-glass admin included) for the database-backed
 * route. Prints
 * `READY <port> <access token> <api key>` when it can take load; stops when told to or when the
 * bench goes away, and removes its folder.
 */
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { openNodeDatabase } from "../../control-plane/src/adapter/node-db.ts";
import { buildApp } from "../../control-plane/src/app.ts";
import { bootstrap } from "../../control-plane/src/bootstrap/bootstrap.ts";
import { Keyring } from "../../control-plane/src/secrets/keyring.ts";
import { createServices } from "../../control-plane/src/services.ts";
import { benchFolder, onShutdown } from "./lifecycle.ts";

const USERS = Number(process.env.BENCH_USERS ?? 10);
const key = `lsk_${"b".repeat(40)}`;
const password = "bench-admin-password";
const dir = benchFolder("lakesmith-bench-api-");
const database = await openNodeDatabase(`file:${join(dir, "bench.db")}`);
const services = createServices({
  db: database.db,
  secrets: Keyring.random(),
  ...(database.statements ? { statements: database.statements } : {}),
});
await bootstrap(services, { adminApiKey: key, adminPassword: password });
const { total: bootstrapped } = await services.users.list(0, 1);
for (let i = bootstrapped; i < USERS; i++) {
  await services.users.create({
    full_name: `Bench User ${i}`,
    email: `bench.user${i}@example.com`,
    role: i % 3 === 0 ? "Editor" : "Viewer",
    auth_type: "oidc",
  });
}

const root = new Hono();
root.get("/bench/bare", (c) => c.json({ ok: true }));
root.route("/", buildApp(services));

const { access_token } = await services.auth.login("admin", password);
const server = serve({ fetch: root.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  console.log(`READY ${info.port} ${access_token} ${key}`);
});
onShutdown(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    // Keep-alive connections would hold close() open.
    (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
  database.close();
});
