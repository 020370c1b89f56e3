/**
 * An HTTP/1.1 client with one keep-alive socket, to check what a server does to the connection:
 * every request goes over the same socket while the server keeps it open.
 */
import { Agent, request } from "node:http";
import type { Socket } from "node:net";

export interface SentResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The socket the request went over; the same object means the connection was reused. */
  socket: Socket;
}

export function keepAliveClient(baseUrl: string) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return {
    /**
     * Sends `body` with a Content-Length, or chunked (no Content-Length, several writes) when
     * `chunked` is set.
     */
    send(
      method: string,
      path: string,
      options: { body?: Buffer; chunked?: boolean; headers?: Record<string, string> } = {},
    ): Promise<SentResponse> {
      return new Promise((resolve, reject) => {
        const headers: Record<string, string> = { ...options.headers };
        if (options.body && !options.chunked) headers["content-length"] = String(options.body.length);
        const req = request(new URL(path, baseUrl), { method, headers, agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString("utf8"),
              socket: req.socket as Socket,
            }),
          );
        });
        req.on("error", reject);
        const body = options.body;
        if (body && options.chunked) {
          for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.subarray(at, at + 64 * 1024));
        } else if (body) req.write(body);
        req.end();
      });
    },
    close: () => agent.destroy(),
  };
}
