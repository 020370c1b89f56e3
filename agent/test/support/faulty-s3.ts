/**
 * A fault-injecting S3 endpoint for tests: a loopback HTTP proxy in front of a real S3-compatible
 * server (s3rver by default, or any endpoint such as the conditional stand-in) that forwards every
 * request untouched, except the ones a rule picks, which it fails the way S3 and networks fail.
 *
 * - Rules match an operation (`GetObject`, `PutObject`, `ListObjectsV2`, `DeleteObjects`, ...) and
 *   a key pattern (the object key inside the bucket; a List's prefix; any key of a DeleteObjects
 *   batch), and fire `times` times (default once), first rule first.
 * - Faults: an error status with S3's XML body (`500 InternalError`, `503 SlowDown`, ...); a reset
 *   before the request reaches the server; `hang` (no answer at all); `loseAnswer` (the server applies the request, the client
 *   gets a reset: the ambiguous case); `stall` (headers and the first `afterBytes` bytes of the body,
 *   then silence until the client gives up); `truncate` (the full Content-Length is promised, the
 *   connection closes after `afterBytes`); `corrupt` (one byte flipped, length kept).
 * - Like S3, a GET that sends `x-amz-checksum-mode: ENABLED` for a whole object gets the object's
 *   full-object CRC32 in `x-amz-checksum-crc32` (s3rver stores none, so the proxy computes it).
 * - `requests` records every request with the fault it got, so tests count attempts instead of
 *   timing them. Request signatures pass through unchanged: the Host header is forwarded as sent.
 * - With `azure`, the upstream is Azurite and requests are Azure Blob paths
 *   (`/account/container/key`): a blob GET, HEAD, PUT and DELETE are `GetObject`, `HeadObject`,
 *   `PutObject` and `DeleteObject`, a staged block `UploadPart`, the block list
 *   `CompleteMultipartUpload`, a container listing `ListObjectsV2`; errors carry `x-ms-error-code`.
 *
 * @example const s3 = await startFaultyS3(); s3.inject({ op: "GetObject", key: /\.parquet$/, fault: { kind: "truncate", afterBytes: 100 } });
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { crc32 } from "node:zlib";
import type { S3StoreOptions } from "../../src/store/index.ts";
import { startS3rver } from "./local-s3.ts";

export type S3Operation =
  | "GetObject"
  | "HeadObject"
  | "PutObject"
  | "DeleteObject"
  | "DeleteObjects"
  | "ListObjectsV2"
  | "CreateMultipartUpload"
  | "UploadPart"
  | "CompleteMultipartUpload"
  | "AbortMultipartUpload"
  | "Other";

export type Fault =
  /** Answered by the proxy with this status and S3's XML error body; the server never sees it. */
  | { kind: "status"; status: number; code?: string }
  /** `503 SlowDown`, S3's throttling answer. */
  | { kind: "slowDown" }
  /** The connection closes before the request reaches the server. */
  | { kind: "reset" }
  /** No answer at all: the connection stays open and silent until the client gives up. */
  | { kind: "hang" }
  /** The server applies the request; the connection closes before its answer is sent. */
  | { kind: "loseAnswer" }
  /** The status, headers and first `afterBytes` bytes of the body, then nothing more. */
  | { kind: "stall"; afterBytes: number }
  /** The full Content-Length is promised; the connection closes after `afterBytes` bytes. */
  | { kind: "truncate"; afterBytes: number }
  /** The byte at `atByte` of the body is flipped; the length stays right. */
  | { kind: "corrupt"; atByte: number };

export interface FaultRule {
  /** The operation(s) it applies to; all when absent. */
  op?: S3Operation | readonly S3Operation[];
  /** The key inside the bucket: a string matches exactly, a RegExp by `test`; any key when absent. */
  key?: string | RegExp;
  /** How many matching requests get the fault (default 1; `Infinity` for all). */
  times?: number;
  fault: Fault;
}

export interface FaultyRequest {
  op: S3Operation;
  method: string;
  /** The object key (or List prefix) inside the bucket; empty for a DeleteObjects batch. */
  key: string;
  /** The fault it got, or null when forwarded untouched. */
  fault: Fault["kind"] | null;
}

export interface FaultyS3 {
  endpoint: string;
  /** Store options that reach the upstream server through the proxy (path-style, its credentials). */
  options: S3StoreOptions;
  /** Adds a rule; rules are tried in the order they were added. */
  inject(rule: FaultRule): void;
  /** Removes every rule (recorded requests stay). */
  clear(): void;
  /** Every request seen, in arrival order. */
  readonly requests: FaultyRequest[];
  /** Requests seen for `op`, optionally only those whose key `key` matches. */
  count(op: S3Operation, key?: string | RegExp): number;
  /** Stops the proxy (and the s3rver it started), cutting stalled connections. */
  close(): Promise<void>;
}

export interface FaultyS3Options {
  /** An S3 endpoint to forward to, with store options that reach it; default: a fresh s3rver. */
  upstream?: { endpoint: string; options: S3StoreOptions };
  /** The upstream speaks Azure Blob paths (Azurite); `endpoint` is then the proxy's origin. */
  azure?: boolean;
}

/** Starts the proxy on 127.0.0.1 with an ephemeral port. */
export async function startFaultyS3(options: FaultyS3Options = {}): Promise<FaultyS3> {
  const owned = options.upstream ? undefined : await startS3rver();
  const upstream = options.upstream ?? (owned as NonNullable<typeof owned>);
  const target = new URL(upstream.endpoint);
  const rules: (FaultRule & { left: number })[] = [];
  const requests: FaultyRequest[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    serve(req, res).catch((err: Error) => {
      if (!res.headersSent) sendError(res, 500, "InternalError", `the fault proxy failed: ${err.message}`);
      else res.destroy(err);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? "/", "http://proxy");
    const op = (options.azure ? azureOperationOf : operationOf)(req.method ?? "GET", url);
    const key = keyOf(url, op, options.azure ? 3 : 2);
    const keys = op === "DeleteObjects" ? deleteKeys(body) : [key];
    const rule = rules.find(
      (r) => r.left > 0 && opMatches(r.op, op) && keys.some((k) => keyMatches(r.key, k)),
    );
    if (rule) rule.left--;
    const fault = rule?.fault ?? null;
    requests.push({ op, method: req.method ?? "GET", key, fault: fault?.kind ?? null });

    if (fault?.kind === "status") return sendError(res, fault.status, fault.code ?? codeOf(fault.status));
    if (fault?.kind === "slowDown")
      return sendError(res, 503, "SlowDown", "Please reduce your request rate.");
    if (fault?.kind === "reset") return void req.socket.destroy();
    if (fault?.kind === "hang") return;

    const answer = await forward(req, body);
    const wantsChecksum =
      op === "GetObject" && answer.status === 200 && req.headers["x-amz-checksum-mode"] === "ENABLED";
    const headers = { ...answer.headers };
    delete headers["transfer-encoding"];
    delete headers.connection;
    if (req.method !== "HEAD") headers["content-length"] = String(answer.body.byteLength);
    if (wantsChecksum) {
      headers["x-amz-checksum-crc32"] = crc32Base64(answer.body);
      headers["x-amz-checksum-type"] = "FULL_OBJECT";
    }
    if (fault?.kind === "loseAnswer") return void req.socket.destroy();
    if (fault?.kind === "stall" || fault?.kind === "truncate") {
      res.writeHead(answer.status, headers);
      const part = answer.body.subarray(0, fault.afterBytes);
      // A stall keeps the socket open and silent; the client's own timeout must end it.
      if (fault.kind === "stall") return void res.write(part);
      return void res.write(part, () => req.socket.destroy());
    }
    let out = answer.body;
    if (fault?.kind === "corrupt" && fault.atByte < out.byteLength) {
      out = Buffer.from(out);
      out[fault.atByte] = (out[fault.atByte] as number) ^ 0xff;
    }
    res.writeHead(answer.status, headers).end(out);
  }

  function forward(
    req: IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const out = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          readBody(answer).then(
            (bytes) => resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: bytes }),
            reject,
          );
        },
      );
      out.on("error", reject);
      out.end(body);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    options: { ...upstream.options, endpoint, forcePathStyle: true },
    inject: (rule) => rules.push({ ...rule, left: rule.times ?? 1 }),
    clear: () => void rules.splice(0),
    requests,
    count: (op, key) =>
      requests.filter((r) => r.op === op && (key === undefined || keyMatches(key, r.key))).length,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
      await owned?.close();
    },
  };
}

/** The S3 operation of a path-style request, from its method, path and query. */
function operationOf(method: string, url: URL): S3Operation {
  const q = url.searchParams;
  const onObject = url.pathname.split("/").filter(Boolean).length > 1;
  if (method === "GET") return onObject ? "GetObject" : q.has("list-type") ? "ListObjectsV2" : "Other";
  if (method === "HEAD") return onObject ? "HeadObject" : "Other";
  if (method === "PUT") return q.has("partNumber") ? "UploadPart" : onObject ? "PutObject" : "Other";
  if (method === "POST") {
    if (q.has("delete")) return "DeleteObjects";
    if (q.has("uploads")) return "CreateMultipartUpload";
    if (q.has("uploadId")) return "CompleteMultipartUpload";
    return "Other";
  }
  if (method === "DELETE")
    return q.has("uploadId") ? "AbortMultipartUpload" : onObject ? "DeleteObject" : "Other";
  return "Other";
}

/** The same for an Azure Blob request (`/account/container/key?comp=...`). */
function azureOperationOf(method: string, url: URL): S3Operation {
  const comp = url.searchParams.get("comp");
  const onBlob = url.pathname.split("/").filter(Boolean).length > 2;
  if (method === "GET" && !onBlob) return comp === "list" ? "ListObjectsV2" : "Other";
  if (!onBlob) return "Other";
  if (method === "GET") return "GetObject";
  if (method === "HEAD") return "HeadObject";
  if (method === "DELETE") return "DeleteObject";
  if (method === "PUT")
    return comp === "block" ? "UploadPart" : comp === "blocklist" ? "CompleteMultipartUpload" : "PutObject";
  return "Other";
}

/** The key inside the bucket or container (`/bucket/a/b` → `a/b`), or a List's prefix. */
function keyOf(url: URL, op: S3Operation, depth: number): string {
  if (op === "ListObjectsV2") return url.searchParams.get("prefix") ?? "";
  return url.pathname.split("/").slice(depth).map(decodeURIComponent).join("/");
}

/** The keys a DeleteObjects body names (a small XML document). */
function deleteKeys(body: Buffer): string[] {
  return [...body.toString("utf8").matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unescapeXml(m[1] ?? ""));
}

function unescapeXml(text: string): string {
  return text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&amp;", "&");
}

function opMatches(want: FaultRule["op"], op: S3Operation): boolean {
  if (want === undefined) return true;
  return typeof want === "string" ? want === op : want.includes(op);
}

function keyMatches(want: string | RegExp | undefined, key: string): boolean {
  if (want === undefined) return true;
  return typeof want === "string" ? want === key : want.test(key);
}

function codeOf(status: number): string {
  if (status === 503) return "ServiceUnavailable";
  if (status === 504) return "GatewayTimeout";
  if (status === 502) return "BadGateway";
  return "InternalError";
}

function crc32Base64(bytes: Buffer): string {
  const value = Buffer.alloc(4);
  value.writeUInt32BE(crc32(bytes));
  return value.toString("base64");
}

async function readBody(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function sendError(res: ServerResponse, status: number, code: string, message = "injected fault"): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>faulty-s3</RequestId></Error>`;
  res
    .writeHead(status, {
      "Content-Type": "application/xml",
      "Content-Length": Buffer.byteLength(body),
      "x-ms-error-code": code,
    })
    .end(body);
}
