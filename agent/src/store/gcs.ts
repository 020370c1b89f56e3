/**
 * `gs://` stores on Google Cloud Storage through its S3-compatible XML API, with HMAC keys, on the
 * same client and code as `s3://` (`s3.ts`).
 *
 * Why the XML API and not `@google-cloud/storage` (JSON API): one client for both, so `gs://` gets
 * the retries, stall timeouts, resumed reads and part-at-a-time multipart writes that the fault
 * suite proves for `s3://`, and the agent gains no second HTTP stack or auth library. The cost:
 * credentials are HMAC keys (a service account's), not application-default credentials or
 * workload identity.
 *
 * Where the XML API differs from S3, the dialect says so:
 * - Write-if-absent is a PUT with `x-goog-if-generation-match: 0` (GCS ignores `If-None-Match` on
 *   writes); a 412 means the key exists.
 * - There is no DeleteObjects: a batch delete is one DELETE per key, 16 in flight; GCS answers 404
 *   NoSuchKey for a key already gone, which counts as deleted.
 * - GETs don't ask for S3 checksums (`x-amz-checksum-mode`); GCS's own (`x-goog-hash`) are not read.
 * - Requests are signed SigV4 with region `auto`, path-style, against `storage.googleapis.com`
 *   unless `endpoint` says otherwise; checksums are sent only where the API requires them.
 */
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { type S3Dialect, S3Store, type S3StoreOptions } from "./s3.ts";
import { StoreError } from "./types.ts";

export const GCS_ENDPOINT = "https://storage.googleapis.com";

export interface GcsStoreOptions
  extends Pick<S3StoreOptions, "retry" | "partSize" | "queueSize" | "maxConditionalBytes" | "client"> {
  /** The XML API's address (default `https://storage.googleapis.com`). */
  endpoint?: string;
  /** An HMAC key of a service account: its access ID and secret. */
  hmac?: { accessId: string; secret: string };
}

const GCS_DIALECT: S3Dialect = {
  scheme: "gs",
  putIfAbsent: (input) => {
    const command = new PutObjectCommand(input);
    command.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers["x-goog-if-generation-match"] = "0";
        return next(args);
      },
      { step: "build", name: "gcsIfGenerationMatch" },
    );
    return command;
  },
  batchDelete: false,
  checksumMode: false,
};

export class GcsStore extends S3Store {
  /** `prefix` is the key prefix of the root: empty or ending with `/`. */
  constructor(bucket: string, prefix: string, options: GcsStoreOptions = {}) {
    if (!options.client && !options.hmac)
      throw new StoreError(
        "unsupported",
        `gs://${bucket}/ needs an HMAC key: set LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID and LAKESMITH_AGENT_GCS_HMAC_SECRET (see docs/agent-install.md)`,
      );
    const { endpoint, hmac, ...rest } = options;
    super(
      bucket,
      prefix,
      {
        ...rest,
        endpoint: endpoint ?? GCS_ENDPOINT,
        region: "auto",
        forcePathStyle: true,
        ...(hmac ? { credentials: { accessKeyId: hmac.accessId, secretAccessKey: hmac.secret } } : {}),
      },
      GCS_DIALECT,
    );
  }
}
