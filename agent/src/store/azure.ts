/**
 * `azure://` stores on Azure Blob Storage and ADLS Gen2 (its Blob endpoint), through
 * `@azure/storage-blob`. `azure://<account>/<container>/<key>` and Hadoop's
 * `abfs[s]://<container>@<account>.dfs.core.windows.net/<key>` name the same objects; the store's
 * URIs keep the spelling it was opened with, so paths it writes read back in the caller's tools.
 *
 * - Credentials (one of): a connection string (its account must be the URI's), the account key,
 *   or a SAS token; `endpoint` replaces `https://<account>.blob.core.windows.net` (Azurite).
 * - Faults: the SDK's own retries are off; every request goes through `retrying` (`retry.ts`)
 *   with the policy `s3://` uses: 5xx, 408, 429 (ServerBusy is a 503) and network errors retried
 *   with jittered backoff, an attempt silent for `stallTimeoutMs` abandoned; then a
 *   `StoreError("unavailable")`. Reads resume where a body broke, stalled or ended short
 *   (`resume.ts`), `If-Match` the first answer's ETag; a whole read is checked against the blob's
 *   Content-MD5 where it has one.
 * - Writes up to `partSize` are one Put Blob; larger ones stage blocks of `partSize`, `queueSize`
 *   at a time, each retried on its own, then commit the block list: readers see the old blob or
 *   the new one. Blocks of a write that failed are never committed (Azure drops them in a week).
 * - Write-if-absent is Put Blob with `If-None-Match: *` (409 BlobAlreadyExists or 412: `exists`),
 *   its answer-lost retry settled by reading the blob back (`conditional.ts`).
 * - Listing is by prefix, in key order (Azure lists names in byte order), skipping ADLS Gen2
 *   directory entries. Batch delete is one Delete Blob per key, 16 in flight; a blob already gone
 *   counts as deleted, every other failure is reported for its key.
 */
import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import {
  BlobServiceClient,
  type BlockBlobClient,
  type ContainerClient,
  type StoragePipelineOptions,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { partsOf, sourceBytes } from "./body.ts";
import { runningChecksum } from "./checksum.ts";
import { holdsExactly } from "./conditional.ts";
import { checkKey, checkPrefix, splitKeys } from "./keys.ts";
import { downloadObject } from "./local.ts";
import { deleteEach, forEachLimit } from "./parallel.ts";
import { type BodyAnswer, resumingBody } from "./resume.ts";
import {
  attemptsOf,
  DEFAULT_RETRY,
  finalError,
  isTransientStatus,
  type RetryPolicy,
  retrying,
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

const DELETE_CONCURRENCY = 16;

export interface AzureStoreOptions {
  /** The Blob service URL, for Azurite or a private endpoint: `http://127.0.0.1:10000/devstoreaccount1`. */
  endpoint?: string;
  /** A connection string (`DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...`). */
  connectionString?: string;
  /** The storage account's key. */
  accountKey?: string;
  /** A SAS token (with or without the leading `?`) for the account or container. */
  sasToken?: string;
  /** Retries, backoff and the stall timeout (defaults: `DEFAULT_RETRY`). */
  retry?: Partial<RetryPolicy>;
  /** Block size and single-request threshold in bytes (default 16 MiB). */
  partSize?: number;
  /** Blocks uploaded at once (default 4); memory is about `partSize * (queueSize + 2)`. */
  queueSize?: number;
  /** Largest object `writeIfAbsent` accepts; it is held in memory (default 64 MiB). */
  maxConditionalBytes?: number;
  /** Blobs per listing request (default 5000, the service's maximum). */
  pageSize?: number;
  /** How the store writes its URIs: `azure://account/container/` (default) or Hadoop's `abfs[s]://`. */
  spelling?: "azure" | "abfs" | "abfss";
}

export class AzureStore implements ObjectStore {
  readonly uri: string;
  readonly container: ContainerClient;
  private readonly retry: RetryPolicy;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly maxConditionalBytes: number;
  private readonly pageSize: number;

  /** `prefix` is the key prefix of the root: empty or ending with `/`. */
  constructor(
    readonly account: string,
    containerName: string,
    private readonly prefix: string,
    options: AzureStoreOptions = {},
  ) {
    if (prefix !== "" && !prefix.endsWith("/")) this.prefix = `${prefix}/`;
    const spelling = options.spelling ?? "azure";
    this.uri =
      spelling === "azure"
        ? `azure://${account}/${containerName}/${this.prefix}`
        : `${spelling}://${containerName}@${account}.dfs.core.windows.net/${this.prefix}`;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.partSize = Math.max(1, options.partSize ?? 16 * 1024 * 1024);
    this.queueSize = Math.max(1, options.queueSize ?? 4);
    this.maxConditionalBytes = options.maxConditionalBytes ?? 64 * 1024 * 1024;
    this.pageSize = Math.min(5000, Math.max(1, options.pageSize ?? 5000));
    this.container = serviceClient(account, options).getContainerClient(containerName);
  }

  uriOf(key: string): string {
    return this.uri + checkKey(key);
  }

  async *list(prefix = ""): AsyncIterable<ObjectInfo> {
    checkPrefix(prefix);
    let continuationToken: string | undefined;
    do {
      const page = await this.request("LIST", `${this.uri}${prefix}*`, async (abortSignal) => {
        const pages = this.container
          .listBlobsFlat({ prefix: this.prefix + prefix, includeMetadata: true, abortSignal })
          .byPage({ maxPageSize: this.pageSize, ...(continuationToken ? { continuationToken } : {}) });
        return (await pages.next()).value;
      });
      if (!page) return;
      for (const blob of page.segment.blobItems) {
        // An ADLS Gen2 (hierarchical) account lists its directories as empty blobs.
        if (blob.metadata?.hdi_isfolder === "true" || blob.properties.resourceType === "directory") continue;
        yield {
          key: blob.name.slice(this.prefix.length),
          size: blob.properties.contentLength ?? 0,
          lastModified: blob.properties.lastModified,
          ...(blob.properties.etag ? { etag: blob.properties.etag } : {}),
        };
      }
      continuationToken = page.continuationToken || undefined;
    } while (continuationToken);
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const blob = this.blob(key);
    try {
      const out = await this.request("HEAD", this.uriOf(key), (abortSignal) =>
        blob.getProperties({ abortSignal }),
      );
      return {
        key,
        size: out.contentLength ?? 0,
        lastModified: out.lastModified ?? new Date(0),
        ...(out.etag ? { etag: out.etag } : {}),
      };
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const uri = this.uriOf(key);
    const blob = this.blob(key);
    const get = async (r: ByteRange | undefined, ifMatch?: string) => {
      const out = await this.request("GET", uri, (abortSignal) =>
        blob.download(r?.start ?? 0, r?.end === undefined ? undefined : r.end - r.start + 1, {
          abortSignal,
          maxRetryRequests: 0,
          ...(ifMatch ? { conditions: { ifMatch } } : {}),
        }),
      );
      const answer: BodyAnswer = {
        body: out.readableStreamBody as Readable,
        length: out.contentLength,
        etag: out.etag,
      };
      return { out, answer };
    };
    try {
      const first = await get(range);
      const md5 = first.out.contentMD5;
      return resumingBody(first.answer, {
        uri,
        range,
        policy: this.retry,
        checksum: md5 ? runningChecksum("MD5", "md5", Buffer.from(md5).toString("base64")) : undefined,
        get: async (r, ifMatch) => (await get(r, ifMatch)).answer,
      });
    } catch (err) {
      if (statusOf(err) === 404) throw new StoreError("not_found", `no object at ${uri}`, { status: 404 });
      throw err;
    }
  }

  download(key: string, localPath: string): Promise<ObjectInfo> {
    return downloadObject(this, key, localPath);
  }

  async write(key: string, source: WriteSource): Promise<void> {
    const uri = this.uriOf(key);
    const blob = this.blob(key);
    const parts = partsOf(source, this.partSize);
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (second.done) {
      const body = first.done ? Buffer.alloc(0) : first.value;
      await this.request("PUT", uri, (abortSignal, alive) =>
        blob.upload(body, body.byteLength, { abortSignal, onProgress: alive }),
      );
      return;
    }
    // Block ids are unique to this write (a concurrent writer's blocks never mix with ours) and of
    // one length, as the service requires.
    const upload = randomBytes(12).toString("hex");
    const ids: string[] = [];
    async function* all(): AsyncGenerator<Buffer> {
      yield first.value as Buffer;
      yield second.value as Buffer;
      yield* parts;
    }
    await forEachLimit(all(), this.queueSize, async (part, i) => {
      const id = Buffer.from(`${upload}-${String(i).padStart(6, "0")}`).toString("base64");
      ids[i] = id;
      await this.request("PUT", uri, (abortSignal, alive) =>
        blob.stageBlock(id, part, part.byteLength, { abortSignal, onProgress: alive }),
      );
    });
    await this.request("PUT", uri, (abortSignal) => blob.commitBlockList(ids, { abortSignal }));
  }

  async writeIfAbsent(key: string, source: WriteSource): Promise<WriteIfAbsentResult> {
    const blob = this.blob(key);
    const body = await sourceBytes(source);
    if (body.byteLength > this.maxConditionalBytes)
      throw new StoreError(
        "unsupported",
        `writeIfAbsent holds the object in memory; ${body.byteLength} bytes is over the ` +
          `${this.maxConditionalBytes}-byte limit (raise maxConditionalBytes)`,
      );
    try {
      await this.request("PUT", this.uriOf(key), (abortSignal, alive) =>
        blob.upload(body, body.byteLength, {
          abortSignal,
          onProgress: alive,
          conditions: { ifNoneMatch: "*" },
        }),
      );
      return { written: true };
    } catch (err) {
      const status = statusOf(err);
      const exists =
        status === 412 || (status === 409 && (err as { code?: string }).code === "BlobAlreadyExists");
      if (!exists) throw err;
      // A first attempt may have landed with its answer lost: then the object there is ours.
      if (attemptsOf(err) > 1 && (await holdsExactly(this, key, body))) return { written: true };
      return { written: false, reason: "exists" };
    }
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteResult> {
    const { valid, result } = splitKeys(keys);
    await deleteEach(valid, result, DELETE_CONCURRENCY, async (key) => {
      const blob = this.blob(key);
      try {
        await this.request("DELETE", this.uriOf(key), (abortSignal) => blob.delete({ abortSignal }));
      } catch (err) {
        if ((err as { code?: string }).code !== "BlobNotFound") return err as Error;
      }
      return null;
    });
    return result;
  }

  private blob(key: string): BlockBlobClient {
    return this.container.getBlockBlobClient(this.prefix + checkKey(key));
  }

  /** One request under the retry policy; its final error as `finalError` makes it. */
  private async request<T>(
    operation: string,
    uri: string,
    attempt: (abortSignal: AbortSignal, alive: () => void) => Promise<T>,
  ): Promise<T> {
    try {
      return await retrying(this.retry, transient, attempt);
    } catch (err) {
      throw finalError(operation, uri, err);
    }
  }
}

/** Whether an Azure SDK error is worth another attempt: no answer (network), or a transient status. */
function transient(err: unknown): boolean {
  if ((err as Error | undefined)?.name !== "RestError") return false;
  const status = statusOf(err);
  return status === undefined || isTransientStatus(status);
}

/** The account's Blob service client, with the SDK's retries off (ours run instead). */
function serviceClient(account: string, options: AzureStoreOptions): BlobServiceClient {
  const pipeline: StoragePipelineOptions = { retryOptions: { maxTries: 1 } };
  const endpoint = (options.endpoint ?? `https://${account}.blob.core.windows.net`).replace(/\/+$/, "");
  if (options.connectionString) {
    const client = BlobServiceClient.fromConnectionString(options.connectionString, pipeline);
    if (client.accountName !== account)
      throw new StoreError(
        "unsupported",
        `the Azure connection string is for the account '${client.accountName}', not '${account}'`,
      );
    return client;
  }
  if (options.accountKey)
    return new BlobServiceClient(
      endpoint,
      new StorageSharedKeyCredential(account, options.accountKey),
      pipeline,
    );
  if (options.sasToken)
    return new BlobServiceClient(`${endpoint}?${options.sasToken.replace(/^\?/, "")}`, undefined, pipeline);
  throw new StoreError(
    "unsupported",
    `azure://${account}/ needs a credential: set LAKESMITH_AGENT_AZURE_CONNECTION_STRING, ` +
      "LAKESMITH_AGENT_AZURE_ACCOUNT_KEY or LAKESMITH_AGENT_AZURE_SAS_TOKEN (see docs/agent-install.md)",
  );
}
