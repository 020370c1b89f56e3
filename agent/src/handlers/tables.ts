/**
 * Job kinds that work on tables: `onboarding` (inspection), `crunch` and `optimize`,
 * `opportunity_scan` (what a crunch would gain, measured; `opportunities/`), and the deleting jobs
 * `vacuum`, `partition_expiration`, `recover` and `hard_delete` (`maintenance/`). Each opens the
 * table's store from its URI with the agent's store settings; the allow list has checked the URI
 * before a handler runs.
 */
import { CrunchPayloadSchema, OnboardingPayloadSchema } from "@lakesmith/shared/jobs";
import {
  HARD_DELETE_KIND,
  HardDeletePayloadSchema,
  PARTITION_EXPIRATION_KIND,
  PartitionExpirationPayloadSchema,
  RECOVER_KIND,
  RecoverPayloadSchema,
  VACUUM_KIND,
  VacuumPayloadSchema,
} from "@lakesmith/shared/maintenance";
import { OPPORTUNITY_SCAN_KIND, OpportunityScanPayloadSchema } from "@lakesmith/shared/opportunities";
import type { z } from "zod";
import type { AgentConfig } from "../config.ts";
import { runCrunch } from "../crunch/run.ts";
import { runInspection } from "../inspect/run.ts";
import { runPartitionExpiration } from "../maintenance/expire.ts";
import { runHardDelete } from "../maintenance/hard-delete.ts";
import { runRecover } from "../maintenance/recover.ts";
import { runVacuum } from "../maintenance/vacuum.ts";
import { runOpportunityScan } from "../opportunities/run.ts";
import { defineHandler, type JobContext, type JobHandler } from "../registry.ts";
import { type ObjectStore, type StoreOptions, storeFor } from "../store/index.ts";

export type TableHandlerConfig = Pick<
  AgentConfig,
  "s3_region" | "s3_endpoint" | "s3_force_path_style" | "memory_limit_mb"
> &
  Partial<
    Pick<
      AgentConfig,
      | "s3_max_attempts"
      | "s3_retry_base_ms"
      | "s3_retry_max_ms"
      | "s3_stall_timeout_ms"
      | "gcs_endpoint"
      | "gcs_hmac_access_id"
      | "gcs_hmac_secret"
      | "azure_endpoint"
      | "azure_connection_string"
      | "azure_account_key"
      | "azure_sas_token"
    >
  >;

/**
 * The store options the agent's configuration gives: S3 credentials come from the AWS SDK's chain,
 * GCS and Azure ones from the configuration; the retry settings apply to every remote store.
 */
export function storeOptions(config: TableHandlerConfig): StoreOptions {
  const retry = {
    ...(config.s3_max_attempts ? { attempts: config.s3_max_attempts } : {}),
    ...(config.s3_retry_base_ms ? { baseMs: config.s3_retry_base_ms } : {}),
    ...(config.s3_retry_max_ms ? { maxMs: config.s3_retry_max_ms } : {}),
    ...(config.s3_stall_timeout_ms ? { stallTimeoutMs: config.s3_stall_timeout_ms } : {}),
  };
  return {
    s3: {
      ...(config.s3_region ? { region: config.s3_region } : {}),
      ...(config.s3_endpoint ? { endpoint: config.s3_endpoint } : {}),
      forcePathStyle: config.s3_force_path_style,
      retry,
    },
    gcs: {
      ...(config.gcs_endpoint ? { endpoint: config.gcs_endpoint } : {}),
      ...(config.gcs_hmac_access_id && config.gcs_hmac_secret
        ? { hmac: { accessId: config.gcs_hmac_access_id, secret: config.gcs_hmac_secret } }
        : {}),
      retry,
    },
    azure: {
      ...(config.azure_endpoint ? { endpoint: config.azure_endpoint } : {}),
      ...(config.azure_connection_string ? { connectionString: config.azure_connection_string } : {}),
      ...(config.azure_account_key ? { accountKey: config.azure_account_key } : {}),
      ...(config.azure_sas_token ? { sasToken: config.azure_sas_token } : {}),
      retry,
    },
  };
}

/** What every table job gets: the table's store, and the agent's memory limit for DuckDB. */
export interface TableJobOptions {
  store: ObjectStore;
  memoryLimitMb: number;
}

export function tableHandlers(config: TableHandlerConfig): JobHandler[] {
  const options = storeOptions(config);
  /** A handler of a job on the table at its payload's `uri` (and catalog): what the allow list checks. */
  const onTable = <S extends z.ZodType<{ uri: string; catalog?: { uri: string } | undefined }>>(
    kind: string,
    payload: S,
    run: (ctx: JobContext<z.infer<S>>, table: TableJobOptions) => Promise<Record<string, unknown>>,
  ) =>
    defineHandler({
      kind,
      payload,
      locations: (p) => [p.uri],
      // A catalog the table is committed through is an endpoint the allow list must cover.
      endpoints: (p) => (p.catalog ? [p.catalog.uri] : []),
      run: (ctx) =>
        run(ctx, { store: storeFor(ctx.payload.uri, options), memoryLimitMb: config.memory_limit_mb }),
    });
  return [
    onTable("onboarding", OnboardingPayloadSchema, runInspection),
    onTable("crunch", CrunchPayloadSchema, (ctx, table) => runCrunch("crunch", ctx, table)),
    onTable("optimize", CrunchPayloadSchema, (ctx, table) => runCrunch("optimize", ctx, table)),
    onTable(OPPORTUNITY_SCAN_KIND, OpportunityScanPayloadSchema, runOpportunityScan),
    onTable(VACUUM_KIND, VacuumPayloadSchema, runVacuum),
    onTable(PARTITION_EXPIRATION_KIND, PartitionExpirationPayloadSchema, runPartitionExpiration),
    onTable(RECOVER_KIND, RecoverPayloadSchema, runRecover),
    onTable(HARD_DELETE_KIND, HardDeletePayloadSchema, runHardDelete),
  ];
}
