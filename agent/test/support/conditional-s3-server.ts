/**
 * A STAND-IN, not an S3 implementation: a loopback HTTP server that answers path-style S3
 * `PutObject`, `GetObject`, `HeadObject` and `DeleteObject` on top of a real folder, and enforces
 * `If-None-Match: *` on PUT (412 PreconditionFailed when the key exists). With `gcs`, it acts as
 * Google Cloud Storage's XML API does instead: it enforces `x-goog-if-generation-match: 0` and
 * ignores `If-None-Match` on PUT, and answers a DELETE of a missing key 404 NoSuchKey (S3: 204).
 *
 * It exists because no S3-compatible server that enforces conditional writes can run here:
 * s3rver (and its forks, and fauxqs) honour If-None-Match on GET only, and MinIO or LocalStack
 * are not installable offline. The store tests use it only for what s3rver can't show: that
 * `S3Store.writeIfAbsent` sends the header and reads 412 and 409 as outcomes, and that racing
 * writers get exactly one winner. It does not check signatures.
 *
 * The enforcement is the same as `FileStore`'s: each body goes to a temporary file in the key's
 * folder, then `link()` (fails with EEXIST if the key exists) or `rename()` into place.
 */

import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { link, mkdir, rename, stat, unlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";

export interface ConditionalS3Server {
  endpoint: string;
  /** Keys (bucket/key) whose next conditional PUT is answered 409 ConditionalRequestConflict. */
  conflictNext: Set<string>;
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 with an ephemeral port, storing objects under `folder`. */
export async function startConditionalS3Server(
  folder: string,
  options: { gcs?: boolean } = {},
): Promise<ConditionalS3Server> {
  const conflictNext = new Set<string>();
  const gcs = options.gcs ?? false;
  const server: Server = createServer((req, res) => {
    handle(folder, conflictNext, gcs, req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, "InternalError", err.message);
      else res.destroy(err);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    conflictNext,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}

async function handle(
  folder: string,
  conflictNext: Set<string>,
  gcs: boolean,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://stand-in");
  const segments = url.pathname.split("/").slice(1).map(decodeURIComponent);
  if (segments.length < 2 || segments.some((s) => s === "" || s === "." || s === ".."))
    return sendError(res, 400, "InvalidRequest", "the stand-in serves path-style object keys only");
  const objectKey = segments.join("/");
  const path = join(folder, ...segments);

  if (req.method === "PUT") {
    const conditional = gcs
      ? req.headers["x-goog-if-generation-match"] === "0"
      : req.headers["if-none-match"] === "*";
    if (conditional && conflictNext.delete(objectKey)) {
      req.resume();
      return sendError(
        res,
        409,
        "ConditionalRequestConflict",
        "a conditional write to this key is in flight",
      );
    }
    await mkdir(dirname(path), { recursive: true });
    const temp = `${path}.standin-${randomBytes(6).toString("hex")}`;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await writeFile(temp, Buffer.concat(chunks), { flag: "wx" });
    try {
      if (conditional) await link(temp, path);
      else await rename(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST")
        return sendError(
          res,
          412,
          "PreconditionFailed",
          "At least one of the pre-conditions you specified did not hold",
        );
      throw err;
    } finally {
      await unlink(temp).catch(() => {});
    }
    res.writeHead(200, { ETag: `"${randomBytes(16).toString("hex")}"` }).end();
    return;
  }

  if (req.method === "GET" || req.method === "HEAD") {
    const s = await stat(path).catch(() => undefined);
    if (!s?.isFile()) {
      if (req.method === "HEAD") return void res.writeHead(404).end();
      return sendError(res, 404, "NoSuchKey", "The specified key does not exist.");
    }
    res.writeHead(200, { "Content-Length": s.size, "Last-Modified": s.mtime.toUTCString() });
    if (req.method === "HEAD") return void res.end();
    createReadStream(path).pipe(res);
    return;
  }
  if (req.method === "DELETE") {
    try {
      await unlink(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      if (gcs) return sendError(res, 404, "NoSuchKey", "The specified key does not exist.");
    }
    return void res.writeHead(204).end();
  }
  sendError(res, 501, "NotImplemented", `the stand-in does not implement ${req.method}`);
}

function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res
    .writeHead(status, { "Content-Type": "application/xml", "Content-Length": Buffer.byteLength(body) })
    .end(body);
}
