/**
 * The server side of `npm run bench:api`: the real control plane app on a fresh embedded libSQL
 * file, served by @hono/node-server, with one extra bare Hono route on the same server as the
 * baseline. Prints `READY <port> <access token> <api key>` when it can take load.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { openNodeDatabase } from "../../control-plane/src/adapter/node-db.ts";
import { buildApp } from "../../control-plane/src/app.ts";
import { bootstrap } from "../../control-plane/src/bootstrap/bootstrap.ts";
import { Keyring } from "../../control-plane/src/secrets/keyring.ts";
import { createServices } from "../../control-plane/src/services.ts";

const key = `lsk_${"b".repeat(40)}`;
const password = "bench-admin-password";
const dir = mkdtempSync(join(tmpdir(), "lakesmith-bench-"));
const { db } = await openNodeDatabase(`file:${join(dir, "bench.db")}`);
const services = createServices({ db, secrets: Keyring.random() });
await bootstrap(services, { adminApiKey: key, adminPassword: password });

const root = new Hono();
root.get("/bench/bare", (c) => c.json({ ok: true }));
root.route("/", buildApp(services));

const { access_token } = await services.auth.login("admin", password);
const server = serve({ fetch: root.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  console.log(`READY ${info.port} ${access_token} ${key}`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
