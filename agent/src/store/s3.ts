/**
 * `s3://` stores on Amazon S3 and S3-compatible servers (MinIO, R2, Ceph), through
 * `@aws-sdk/client-s3`.
 *
 * - Credentials and region come from the SDK's standard chain (environment, shared config and
 *   profiles, web identity, container and instance metadata) unless given as options.
 * - `endpoint` and `forcePathStyle` reach S3-compatible servers. With an endpoint, request
 *   checksums are sent only where the API requires them: many such servers do not understand the
 *   SDK's streaming checksum trailers.
 * - Every request retries with the SDK's standard strategy (exponential backoff with jitter,
 *   `maxAttempts` in all). Writes of streams and files go through `@aws-sdk/lib-storage`, which
 *   buffers each part, so a retry resends one part, not the object; objects above `partSize`
 *   become multipart uploads, aborted if any part fails.
 * - Write-if-absent is `PutObject` with `If-None-Match: *`. A 412 means the key exists; a 409
 *   (ConditionalRequestConflict) means another conditional write to the key was in flight. Both
 *   are outcomes. One caveat: if an attempt lands but its response is lost, the retry sees our own
 *   object and answers 412, so a caller that must know who won (a Delta commit) compares content.
 */

import type { Readable } from "node:stream";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { sourceBytes, sourceStream } from "./body.ts";
import { checkKey, checkPrefix } from "./keys.ts";
import { downloadObject } from "./local.ts";
import {
  type ByteRange,
  type DeleteResult,
  type ObjectInfo,
  type ObjectStore,
  StoreError,
  type WriteIfAbsentResult,
  type WriteSource,
} from "./types.ts";

/** S3's minimum size for every part but the last. */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;

export interface S3StoreOptions {
  /** Defaults to the SDK's chain (`AWS_REGION`, the profile); `us-east-1` with an `endpoint` and no other. */
  region?: string;
  /** An S3-compatible server, e.g. `http://127.0.0.1:9000`; `AWS_ENDPOINT_URL_S3` works too. */
  endpoint?: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key`; most S3-compatible servers want it. */
  forcePathStyle?: boolean;
  /** Fixed credentials; otherwise the SDK's default provider chain. */
  credentials?: S3ClientConfig["credentials"];
  /** Attempts per request, first included (default 5). */
  maxAttempts?: number;
  /** Multipart part size and threshold in bytes (default 16 MiB, at least `MIN_PART_SIZE`). */
  partSize?: number;
  /** Parts uploaded at once (default 4); memory is about `partSize * queueSize`. */
  queueSize?: number;
  /** Largest object `writeIfAbsent` accepts; it is held in memory (default 64 MiB). */
  maxConditionalBytes?: number;
  /** A client to share between stores; the options above that configure a client are then ignored. */
  client?: S3Client;
}

export class S3Store implements ObjectStore {
  readonly uri: string;
  readonly client: S3Client;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly maxConditionalBytes: number;

  /** `prefix` is the key prefix of the root: empty or ending with `/`. */
  constructor(
    readonly bucket: string,
    private readonly prefix: string,
    options: S3StoreOptions = {},
  ) {
    if (prefix !== "" && !prefix.endsWith("/")) this.prefix = `${prefix}/`;
    this.uri = `s3://${bucket}/${this.prefix}`;
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? 16 * 1024 * 1024);
    this.queueSize = options.queueSize ?? 4;
    this.maxConditionalBytes = options.maxConditionalBytes ?? 64 * 1024 * 1024;
    this.client = options.client ?? new S3Client(clientConfig(options));
  }

  uriOf(key: string): string {
    return this.uri + checkKey(key);
  }

  async *list(prefix = ""): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    const pages = paginateListObjectsV2(
      { client: this.client },
      { Bucket: this.bucket, Prefix: this.prefix + prefix },
    );
    for await (const page of pages) {
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined) continue;
        yield {
          key: o.Key.slice(this.prefix.length),
          size: o.Size ?? 0,
          lastModified: o.LastModified ?? new Date(0),
          ...(o.ETag ? { etag: o.ETag } : {}),
        };
      }
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    try {
      const out = await this.client.send(
        new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(key) }),
      );
      return {
        key,
        size: out.ContentLength ?? 0,
        lastModified: out.LastModified ?? new Date(0),
        ...(out.ETag ? { etag: out.ETag } : {}),
      };
    } catch (err) {
      if (status(err) === 404) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(key),
          ...(range ? { Range: `bytes=${range.start}-${range.end ?? ""}` } : {}),
        }),
      );
      // In Node the SDK's body is an http.IncomingMessage, a Readable.
      return out.Body as Readable;
    } catch (err) {
      if (status(err) === 404) throw new StoreError("not_found", `no object at ${this.uriOf(key)}`);
      throw err;
    }
  }

  download(key: string, localPath: string): Promise<ObjectInfo> {
    return downloadObject(this, key, localPath);
  }

  async write(key: string, source: WriteSource): Promise<void> {
    const Key = this.keyOf(key);
    if (typeof source === "string" || source instanceof Uint8Array) {
      const body = await sourceBytes(source);
      if (body.byteLength <= this.partSize) {
        await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: body }));
        return;
      }
    }
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key, Body: sourceStream(source) },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    const Key = this.keyOf(key);
    const body = await sourceBytes(source);
    if (body.byteLength > this.maxConditionalBytes)
      throw new StoreError(
        "unsupported",
        `writeIfAbsent holds the object in memory; ${body.byteLength} bytes is over the ` +
          `${this.maxConditionalBytes}-byte limit (raise maxConditionalBytes)`,
      );
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key, Body: body, IfNoneMatch: "*" }),
      );
      return { written: true };
    } catch (err) {
      if (status(err) === 412) return { written: false, reason: "exists" };
      if (status(err) === 409 && (err as Error).name === "ConditionalRequestConflict")
        return { written: false, reason: "conflict" };
      throw err;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const result: DeleteResult = { deleted: [], errors: [] };
    const valid: string[] = [];
    for (const key of keys) {
      try {
        checkKey(key);
        valid.push(key);
      } catch (err) {
        result.errors.push({ key, code: "invalid_key", message: (err as Error).message });
      }
    }
    for (let i = 0; i < valid.length; i += DELETE_BATCH) {
      const batch = valid.slice(i, i + DELETE_BATCH);
      try {
        const out = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: batch.map((key) => ({ Key: this.prefix + key })), Quiet: true },
          }),
        );
        // Quiet mode lists only failures; every other key of the batch is gone.
        const failed = new Set<string>();
        for (const e of out.Errors ?? []) {
          const key = (e.Key ?? "").slice(this.prefix.length);
          failed.add(key);
          result.errors.push({ key, code: e.Code ?? "error", message: e.Message ?? "delete failed" });
        }
        result.deleted.push(...batch.filter((key) => !failed.has(key)));
      } catch (err) {
        // A failed request deleted nothing we can vouch for: report each key, go on with the rest.
        const code = (err as Error).name || "error";
        for (const key of batch) result.errors.push({ key, code, message: (err as Error).message });
      }
    }
    return result;
  }

  private keyOf(key: string): string {
    return this.prefix + checkKey(key);
  }
}

function clientConfig(options: S3StoreOptions): S3ClientConfig {
  const config: S3ClientConfig = {
    maxAttempts: options.maxAttempts ?? 5,
    retryMode: "standard",
  };
  const region = options.region ?? (options.endpoint ? "us-east-1" : undefined);
  if (region) config.region = region;
  if (options.endpoint) {
    config.endpoint = options.endpoint;
    config.requestChecksumCalculation = "WHEN_REQUIRED";
    config.responseChecksumValidation = "WHEN_REQUIRED";
  }
  if (options.forcePathStyle !== undefined) config.forcePathStyle = options.forcePathStyle;
  if (options.credentials) config.credentials = options.credentials;
  return config;
}

function status(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}
