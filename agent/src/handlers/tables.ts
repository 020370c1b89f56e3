/**
 * Job kinds that work on tables: `onboarding` (inspection), `crunch` and `optimize`, and the
 * deleting jobs `vacuum`, `partition_expiration`, `recover` and `hard_delete` (`maintenance/`). Each
 * opens the table's store from its URI with the agent's S3 settings; the allow list has checked the
 * URI before a handler runs.
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
import type { AgentConfig } from "../config.ts";
import { runCrunch } from "../crunch/run.ts";
import { runInspection } from "../inspect/run.ts";
import { runPartitionExpiration } from "../maintenance/expire.ts";
import { runHardDelete } from "../maintenance/hard-delete.ts";
import { runRecover } from "../maintenance/recover.ts";
import { runVacuum } from "../maintenance/vacuum.ts";
import { defineHandler, type JobHandler } from "../registry.ts";
import { type ObjectStore, type StoreOptions, storeFor } from "../store/index.ts";

export type TableHandlerConfig = Pick<
  AgentConfig,
  "s3_region" | "s3_endpoint" | "s3_force_path_style" | "memory_limit_mb"
>;

/** The store options the agent's configuration gives (credentials come from the SDK's chain). */
export function storeOptions(config: TableHandlerConfig): StoreOptions {
  return {
    s3: {
      ...(config.s3_region ? { region: config.s3_region } : {}),
      ...(config.s3_endpoint ? { endpoint: config.s3_endpoint } : {}),
      forcePathStyle: config.s3_force_path_style,
    },
  };
}

export function tableHandlers(config: TableHandlerConfig): JobHandler[] {
  const options = storeOptions(config);
  const store = (uri: string): ObjectStore => storeFor(uri, options);
  const maintenance = (uri: string) => ({ store: store(uri), memoryLimitMb: config.memory_limit_mb });
  const crunchOf = (kind: "crunch" | "optimize") =>
    defineHandler({
      kind,
      payload: CrunchPayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) =>
        runCrunch(kind, ctx, { store: store(ctx.payload.uri), memoryLimitMb: config.memory_limit_mb }),
    });
  return [
    defineHandler({
      kind: "onboarding",
      payload: OnboardingPayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) =>
        runInspection(ctx, { store: store(ctx.payload.uri), memoryLimitMb: config.memory_limit_mb }),
    }),
    crunchOf("crunch"),
    crunchOf("optimize"),
    defineHandler({
      kind: VACUUM_KIND,
      payload: VacuumPayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) => runVacuum(ctx, maintenance(ctx.payload.uri)),
    }),
    defineHandler({
      kind: PARTITION_EXPIRATION_KIND,
      payload: PartitionExpirationPayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) => runPartitionExpiration(ctx, maintenance(ctx.payload.uri)),
    }),
    defineHandler({
      kind: RECOVER_KIND,
      payload: RecoverPayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) => runRecover(ctx, maintenance(ctx.payload.uri)),
    }),
    defineHandler({
      kind: HARD_DELETE_KIND,
      payload: HardDeletePayloadSchema,
      locations: (payload) => [payload.uri],
      run: async (ctx) => runHardDelete(ctx, maintenance(ctx.payload.uri)),
    }),
  ];
}
