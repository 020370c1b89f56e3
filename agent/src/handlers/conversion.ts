/**
 * The jobs on a managed prefix's raw JSON (`@lakesmith/shared/prefix-conversion`, `conversion/`):
 * convert to Parquet, propose converted inputs for removal, and hard-delete removed inputs. Each
 * opens the source (and target) prefix's store; the allow list must cover both.
 */
import {
  CONVERT_KIND,
  ConvertPayloadSchema,
  PREFIX_HARD_DELETE_KIND,
  PrefixHardDeletePayloadSchema,
  REMOVE_INPUTS_KIND,
  RemoveInputsPayloadSchema,
} from "@lakesmith/shared/prefix-conversion";
import { runPrefixHardDelete, runRemoveInputs } from "../conversion/remove.ts";
import { runConversion } from "../conversion/run.ts";
import { defineHandler, type JobHandler } from "../registry.ts";
import { storeFor } from "../store/index.ts";
import { storeOptions, type TableHandlerConfig } from "./tables.ts";

export function conversionHandlers(config: TableHandlerConfig): JobHandler[] {
  const options = storeOptions(config);
  return [
    defineHandler({
      kind: CONVERT_KIND,
      payload: ConvertPayloadSchema,
      locations: (p) => [p.source_uri, p.target_uri],
      run: (ctx) =>
        runConversion(ctx, {
          source: storeFor(ctx.payload.source_uri, options),
          target: storeFor(ctx.payload.target_uri, options),
          memoryLimitMb: config.memory_limit_mb,
        }),
    }),
    defineHandler({
      kind: REMOVE_INPUTS_KIND,
      payload: RemoveInputsPayloadSchema,
      locations: (p) => [p.source_uri, p.target_uri],
      run: (ctx) =>
        runRemoveInputs(ctx, {
          source: storeFor(ctx.payload.source_uri, options),
          target: storeFor(ctx.payload.target_uri, options),
        }),
    }),
    defineHandler({
      kind: PREFIX_HARD_DELETE_KIND,
      payload: PrefixHardDeletePayloadSchema,
      locations: (p) => [p.source_uri],
      run: (ctx) => runPrefixHardDelete(ctx, { source: storeFor(ctx.payload.source_uri, options) }),
    }),
  ];
}
