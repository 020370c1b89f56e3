/**
 * Keeps a Node HTTP/1.1 connection usable after a response that did not read the whole request
 * body: a 413 from a body limit, or any early 4xx. Used by every Node server of the project (the
 * control plane's and the appliance's), with @hono/node-server's own clean-up turned off
 * (`autoCleanupIncoming: false`), which this replaces.
 *
 * Why: a handler that reads the body through `Request.body` wraps the socket in `Readable.toWeb`,
 * whose listener pauses the request whenever its queue is full. Once the response is out nobody
 * reads that queue, so the rest of the body stays on the socket: the next request on the
 * connection waits behind it, and @hono/node-server's drain, stalled by the same pause, destroyed
 * the socket after 500 ms although the 413 had said `Connection: keep-alive`.
 *
 * - When the response has finished, the unread rest of the body is read and thrown away (the
 *   reader's listeners are removed first, as Node's own `IncomingMessage._dump` does), so the
 *   connection stays open and the next request on it is answered.
 * - At most `maxDrainBytes` are thrown away per request. A body that declares more in its
 *   Content-Length gets `Connection: close` on its response, so the client is told before the
 *   connection ends; a chunked body that runs past the bound has its connection closed.
 * - Time is bounded by Node's `server.requestTimeout`, which covers a slowly sent body.
 */

/** The parts of Node's `IncomingMessage` this needs (shared/ carries no Node types). */
export interface UnreadBodyRequest {
  method?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  readableEnded: boolean;
  destroyed: boolean;
  socket: { destroy(): void } | null;
  on(event: "data", listener: (chunk: { length: number }) => void): unknown;
  removeAllListeners(event: "data"): unknown;
  resume(): unknown;
}

/** The parts of Node's `ServerResponse` this needs. */
export interface UnreadBodyResponse {
  shouldKeepAlive: boolean;
  once(event: "finish", listener: () => void): unknown;
}

/** The parts of Node's `http.Server` this needs. */
export interface RequestEventSource {
  prependListener(
    event: "request",
    listener: (req: UnreadBodyRequest, res: UnreadBodyResponse) => void,
  ): unknown;
}

/**
 * Installs the drain on `server`; call it right after the server is created.
 *
 * @example
 * const server = serve({ fetch: app.fetch, port, autoCleanupIncoming: false });
 * keepAliveAfterUnreadBodies(server, { maxDrainBytes: 4 * MAX_BODY_BYTES });
 */
export function keepAliveAfterUnreadBodies(
  server: RequestEventSource,
  options: { maxDrainBytes: number },
): void {
  // Prepended so that it runs before the app's listener can write the response head.
  server.prependListener("request", (req, res) => {
    if (req.method === "GET" || req.method === "HEAD") return;
    const declared = Number(req.headers["content-length"]);
    if (declared > options.maxDrainBytes && req.headers["transfer-encoding"] === undefined) {
      res.shouldKeepAlive = false;
    }
    res.once("finish", () => {
      if (!req.readableEnded && !req.destroyed) discardRest(req, options.maxDrainBytes);
    });
  });
}

function discardRest(req: UnreadBodyRequest, maxBytes: number): void {
  req.removeAllListeners("data");
  let discarded = 0;
  req.on("data", (chunk) => {
    discarded += chunk.length;
    if (discarded > maxBytes) req.socket?.destroy();
  });
  req.resume();
}
