/**
 * Catalog connection jobs (document 1, "Catalog connections"): `catalog_test` lists the catalogs
 * a connection sees, `catalog_sync` walks its tables (`catalogs/`). Both reach the connection's
 * endpoint only (and a Polaris token URL, where one is set), which the allow list checks before
 * they run; a sync reads a table's own metadata for its size only under the allow list's prefixes.
 *
 * - A test answers a refused credential or an unreachable catalog with `ok: false` and the
 *   catalog's own message; a sync fails instead, for good when the catalog refused (4xx).
 * - A Hive Metastore is reached over Thrift (`catalogs/hive/`): a refused login fails for good; a
 *   metastore exception or a lost connection may pass, and is retried.
 * - No message carries a secret: the clients redact their own, and every message leaving here is
 *   redacted again with the connection's secret fields. Payloads are never logged.
 */
import {
  CATALOG_SYNC_KIND,
  CATALOG_TEST_KIND,
  type CatalogCredentials,
  CatalogSyncPayloadSchema,
  CatalogTestPayloadSchema,
  type CatalogTestResult,
  catalogEndpoints,
  SECRET_FIELDS,
} from "@lakesmith/shared/catalogs";
import type { Clock } from "@lakesmith/shared/time";
import { AllowList } from "../allow.ts";
import {
  type CatalogClient,
  CatalogCredentialsError,
  HiveMetastoreError,
  openCatalog,
  SIZE_CONCURRENCY,
  sizeReader,
  syncCatalog,
  UnsupportedCatalogError,
} from "../catalogs/index.ts";
import type { AgentConfig } from "../config.ts";
import { RestCatalogError } from "../iceberg/rest/errors.ts";
import { redact } from "../iceberg/rest/http.ts";
import { defineHandler, type JobContext, JobError, type JobHandler } from "../registry.ts";
import { storeOptions, type TableHandlerConfig } from "./tables.ts";

export type CatalogHandlerConfig = TableHandlerConfig & Pick<AgentConfig, "allow">;

export interface CatalogHandlerOptions {
  fetch?: typeof fetch;
  clock?: Clock;
  /** Per catalog request. Default 30 s. */
  timeoutMs?: number;
}

export function catalogHandlers(
  config: CatalogHandlerConfig,
  options: CatalogHandlerOptions = {},
): JobHandler[] {
  const allow = new AllowList(config.allow);
  const store = storeOptions(config);
  const memoryLimitMb = Math.max(64, Math.floor(config.memory_limit_mb / SIZE_CONCURRENCY));
  const open = (ctx: JobContext<{ connection: CatalogCredentials }>): CatalogClient =>
    openCatalog(ctx.payload.connection, {
      sizeOf: sizeReader({ allow, store, scratchDir: ctx.scratchDir, memoryLimitMb }),
      ...options,
    });

  return [
    defineHandler({
      kind: CATALOG_TEST_KIND,
      payload: CatalogTestPayloadSchema,
      locations: () => [],
      endpoints: (p) => catalogEndpoints(p.connection),
      run: async (ctx) => {
        const started = Date.now();
        const secrets = secretsOf(ctx.payload.connection);
        const answer = (ok: boolean, catalogs: string[], message: string | null): CatalogTestResult => ({
          ok,
          catalogs,
          message: message === null ? null : redact(message, secrets),
          duration_ms: Date.now() - started,
        });
        try {
          const catalogs = await open(ctx).listCatalogs();
          return answer(true, catalogs, null);
        } catch (err) {
          if (
            err instanceof RestCatalogError ||
            err instanceof CatalogCredentialsError ||
            err instanceof HiveMetastoreError
          )
            return answer(false, [], err.message);
          throw failure(ctx, err, secrets);
        }
      },
    }),
    defineHandler({
      kind: CATALOG_SYNC_KIND,
      payload: CatalogSyncPayloadSchema,
      locations: () => [],
      endpoints: (p) => catalogEndpoints(p.connection),
      run: async (ctx) => {
        const secrets = secretsOf(ctx.payload.connection);
        try {
          const result = await syncCatalog(open(ctx), ctx.payload, {
            signal: ctx.signal,
            progress: ctx.progress,
            part: ctx.part,
          });
          ctx.log.info(
            {
              mode: result.mode,
              catalogs: result.catalogs.length,
              schemas: result.schemas_count,
              tables: result.tables_count,
              unchanged: result.unchanged_count,
              below_min_size: result.below_min_size,
            },
            "catalog synced",
          );
          return result;
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          throw failure(ctx, err, secrets);
        }
      },
    }),
  ];
}

/** Every secret value the connection carries (`SECRET_FIELDS`). */
function secretsOf(connection: CatalogCredentials): string[] {
  const fields = connection as Record<string, unknown>;
  return SECRET_FIELDS[connection.type]
    .map((field) => fields[field])
    .filter((value): value is string => typeof value === "string" && value.length > 0);
}

/** The catalog's refusals another attempt would meet again (unlike 408, 429 or a 5xx). */
const FINAL_STATUSES = new Set([400, 401, 403, 404]);

/** The job's failure: final for an unsupported type, bad credentials or a refusal (4xx, a refused login). */
function failure(ctx: JobContext<unknown>, err: unknown, secrets: readonly string[]): JobError {
  const message = redact(err instanceof Error ? err.message : String(err), secrets);
  if (err instanceof UnsupportedCatalogError || err instanceof CatalogCredentialsError)
    return new JobError(message, { retryable: false });
  if (err instanceof HiveMetastoreError)
    return new JobError(message, { retryable: err.reason !== "refused" });
  if (err instanceof RestCatalogError) {
    const refused = err.status !== undefined && FINAL_STATUSES.has(err.status);
    return new JobError(message, { retryable: !refused });
  }
  // Not the catalog's answer: a fault here. Logged without the error object, whose cause may
  // hold what the message had redacted.
  ctx.log.error({ err: message }, "catalog job failed");
  return new JobError(message, { retryable: true });
}
