/**
 * Serves the appliance's app on Node. `main.ts` runs it on PORT; tests run it on port 0 to talk to
 * it over real sockets.
 *
 * @example
 * const server = await serveApp(app, { port: 0, hostname: "127.0.0.1", maxBodyBytes });
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { keepAliveAfterUnreadBodies } from "@lakesmith/shared/keep-alive";
import type { Hono } from "hono";

export interface ServeOptions {
  port: number;
  hostname: string;
  /** The app's body limit (`SCREEN_MAX_BODY_BYTES`); up to 4 times it is drained after a 413. */
  maxBodyBytes: number;
}

/** Starts listening and resolves with the server and the port it got. */
export async function serveApp(app: Hono, options: ServeOptions): Promise<{ server: Server; port: number }> {
  const server = serve({
    fetch: app.fetch,
    port: options.port,
    hostname: options.hostname,
    // keepAliveAfterUnreadBodies does this clean-up without closing a keep-alive connection.
    autoCleanupIncoming: false,
  }) as Server;
  keepAliveAfterUnreadBodies(server, { maxDrainBytes: 4 * options.maxBodyBytes });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  return { server, port: (server.address() as AddressInfo).port };
}
