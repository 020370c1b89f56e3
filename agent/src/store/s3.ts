/**
 * `s3://` stores on Amazon S3 and S3-compatible servers (MinIO, R2, Ceph), through
 * `@aws-sdk/client-s3`; `gs://` rides on it too (`gcs.ts`), the differences kept in an `S3Dialect`.
 *
 * - Credentials and region come from the SDK's standard chain (environment, shared config and
 *   profiles, web identity, container and instance metadata) unless given as options.
 * - `endpoint` and `forcePathStyle` reach S3-compatible servers. With an endpoint, request
 *   checksums are sent only where the API requires them: many such servers do not understand the
 *   SDK's streaming checksum trailers.
 * - Faults (`retry.ts`): 5xx, throttling and network errors are retried with jittered exponential
 *   backoff up to `retry.attempts`; a request silent for `retry.stallTimeoutMs` is abandoned and
 *   retried; a read's body that breaks, stalls or ends short resumes where it stopped
 *   (`resume.ts`). When the budget is spent, a `StoreError("unavailable")` names the operation,
 *   the object and the last status. Writes send buffers (whole bodies up to `partSize`, else one
 *   multipart part at a time through `@aws-sdk/lib-storage`), so each retry resends one buffer;
 *   a multipart upload whose part fails for good is aborted, leaving no object.
 * - Write-if-absent is `PutObject` with `If-None-Match: *`. A 412 means the key exists; a 409
 *   (ConditionalRequestConflict) means another conditional write to the key was in flight. Both
 *   are outcomes. If an attempt landed but its answer was lost, the retry meets our own object: so
 *   a 412 or 409 after a retried attempt is settled by reading the object back, and it is ours
 *   (`written`) exactly when its bytes are the ones we sent.
 * - Deletes are idempotent: a key already gone counts as deleted, so a retried DeleteObjects whose
 *   first attempt landed reports each key once, as deleted.
 */

import type { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type PutObjectCommandInput,
  paginateListObjectsV2,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { sourceBytes, sourceStream } from "./body.ts";
import { s3Checksum } from "./checksum.ts";
import { holdsExactly } from "./conditional.ts";
import { checkKey, checkPrefix, reportFailure, splitKeys } from "./keys.ts";
import { downloadObject } from "./local.ts";
import { deleteEach } from "./parallel.ts";
import { type BodyAnswer, resumingBody } from "./resume.ts";
import {
  attemptsOf,
  DEFAULT_RETRY,
  finalError,
  type RetryPolicy,
  sdkRetryStrategy,
  statusOf,
} from "./retry.ts";
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
/** Single-key DELETEs in flight at once where there is no DeleteObjects. */
const DELETE_CONCURRENCY = 16;

/** What differs between Amazon S3 and a store that speaks its API with variations. */
export interface S3Dialect {
  /** The scheme of the store's URIs. */
  scheme: string;
  /** A PutObject that only creates: the store answers 412 when the key exists. */
  putIfAbsent(input: PutObjectCommandInput): PutObjectCommand;
  /** Whether the store serves DeleteObjects; without it, one DeleteObject per key. */
  batchDelete: boolean;
  /** Whether a whole-object GET asks for the S3 checksum (`x-amz-checksum-mode`). */
  checksumMode: boolean;
}

export const S3_DIALECT: S3Dialect = {
  scheme: "s3",
  putIfAbsent: (input) => new PutObjectCommand({ ...input, IfNoneMatch: "*" }),
  batchDelete: true,
  checksumMode: true,
};

export interface S3StoreOptions {
  /** Defaults to the SDK's chain (`AWS_REGION`, the profile); `us-east-1` with an `endpoint` and no other. */
  region?: string;
  /** An S3-compatible server, e.g. `http://127.0.0.1:9000`; `AWS_ENDPOINT_URL_S3` works too. */
  endpoint?: string;
  /** `http://host/bucket/key` instead of `http://bucket.host/key`; most S3-compatible servers want it. */
  forcePathStyle?: boolean;
  /** Fixed credentials; otherwise the SDK's default provider chain. */
  credentials?: S3ClientConfig["credentials"];
  /** Attempts per request, first included (default 5); shorthand for `retry.attempts`. */
  maxAttempts?: number;
  /** Retries, backoff and the stall timeout (defaults: `DEFAULT_RETRY`). */
  retry?: Partial<RetryPolicy>;
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
  private readonly retry: RetryPolicy;

  /** `prefix` is the key prefix of the root: empty or ending with `/`. */
  constructor(
    readonly bucket: string,
    private readonly prefix: string,
    options: S3StoreOptions = {},
    private readonly dialect: S3Dialect = S3_DIALECT,
  ) {
    if (prefix !== "" && !prefix.endsWith("/")) this.prefix = `${prefix}/`;
    this.uri = `${dialect.scheme}://${bucket}/${this.prefix}`;
    this.partSize = Math.max(MIN_PART_SIZE, options.partSize ?? 16 * 1024 * 1024);
    this.queueSize = options.queueSize ?? 4;
    this.maxConditionalBytes = options.maxConditionalBytes ?? 64 * 1024 * 1024;
    this.retry = retryPolicy(options);
    this.client = options.client ?? new S3Client(clientConfig(options, this.retry));
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
    const iterator = pages[Symbol.asyncIterator]();
    for (;;) {
      let page: Awaited<ReturnType<typeof iterator.next>>;
      try {
        page = await iterator.next();
      } catch (err) {
        throw finalError("LIST", `${this.uri}${prefix}*`, err);
      }
      if (page.done) return;
      for (const o of page.value.Contents ?? []) {
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
      if (statusOf(err) === 404) return undefined;
      throw finalError("HEAD", this.uriOf(key), err);
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const uri = this.uriOf(key);
    const get = (r: ByteRange | undefined, ifMatch?: string) =>
      this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: this.keyOf(key),
          ...(r ? { Range: `bytes=${r.start}-${r.end ?? ""}` } : {}),
          ...(!r && this.dialect.checksumMode ? { ChecksumMode: "ENABLED" } : {}),
          ...(ifMatch ? { IfMatch: ifMatch } : {}),
        }),
      );
    const answer = (out: Awaited<ReturnType<typeof get>>): BodyAnswer => ({
      body: out.Body as Readable,
      length: out.ContentLength,
      etag: out.ETag,
    });
    try {
      const first = await get(range);
      return resumingBody(answer(first), {
        uri,
        range,
        policy: this.retry,
        checksum: s3Checksum(first),
        get: async (r, ifMatch) => answer(await get(r, ifMatch)),
      });
    } catch (err) {
      if (statusOf(err) === 404) throw new StoreError("not_found", `no object at ${uri}`, { status: 404 });
      throw finalError("GET", uri, err);
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
        try {
          await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: body }));
        } catch (err) {
          throw finalError("PUT", this.uriOf(key), err);
        }
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
    try {
      await upload.done();
    } catch (err) {
      throw finalError("PUT", this.uriOf(key), err);
    }
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
    let outcome: WriteIfAbsentResult;
    try {
      await this.client.send(this.dialect.putIfAbsent({ Bucket: this.bucket, Key, Body: body }));
      return { written: true };
    } catch (err) {
      if (statusOf(err) === 412) outcome = { written: false, reason: "exists" };
      else if (statusOf(err) === 409 && (err as Error).name === "ConditionalRequestConflict")
        outcome = { written: false, reason: "conflict" };
      else throw finalError("PUT", this.uriOf(key), err);
      // A first attempt may have landed with its answer lost: then the object there is ours.
      if (attemptsOf(err) > 1 && (await holdsExactly(this, key, body))) return { written: true };
      return outcome;
    }
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const { valid, result } = splitKeys(keys);
    if (!this.dialect.batchDelete) {
      await deleteEach(valid, result, DELETE_CONCURRENCY, (key) => this.deleteOne(key));
      return result;
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
        reportFailure(result, batch, finalError("DELETE", `${batch.length} keys under ${this.uri}`, err));
      }
    }
    return result;
  }

  /** One DeleteObject: its failure, or null when the key is gone (404 NoSuchKey where the store says so). */
  private async deleteOne(key: string): Promise<Error | null> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }));
    } catch (err) {
      if (statusOf(err) !== 404 || (err as Error).name !== "NoSuchKey")
        return finalError("DELETE", this.uriOf(key), err);
    }
    return null;
  }

  private keyOf(key: string): string {
    return this.prefix + checkKey(key);
  }
}

/** The retry policy of `options`: `retry` over `maxAttempts` over the defaults. */
function retryPolicy(options: S3StoreOptions): RetryPolicy {
  const attempts = options.retry?.attempts ?? options.maxAttempts ?? DEFAULT_RETRY.attempts;
  return { ...DEFAULT_RETRY, ...options.retry, attempts: Math.max(1, attempts) };
}

function clientConfig(options: S3StoreOptions, retry: RetryPolicy): S3ClientConfig {
  const config: S3ClientConfig = {
    maxAttempts: retry.attempts,
    retryStrategy: sdkRetryStrategy(retry),
    requestHandler: { connectionTimeout: retry.stallTimeoutMs, socketTimeout: retry.stallTimeoutMs },
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
