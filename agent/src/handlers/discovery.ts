/**
 * The `discovery` job (document 1, "Object maintenance"): reads a location's S3 Inventory report
 * and sends its objects grouped into prefixes, bin by bin (`discovery/run.ts`). It touches the
 * inventory's configuration folder only (the report and its data files), which the allow list
 * must cover along with the location.
 */
import { DISCOVERY_KIND, DiscoveryPayloadSchema, inventoryRoot } from "@lakesmith/shared/discovery";
import { runDiscovery } from "../discovery/run.ts";
import { defineHandler, type JobHandler } from "../registry.ts";
import { storeFor } from "../store/index.ts";
import { storeOptions, type TableHandlerConfig } from "./tables.ts";

export function discoveryHandlers(config: TableHandlerConfig): JobHandler[] {
  const options = storeOptions(config);
  return [
    defineHandler({
      kind: DISCOVERY_KIND,
      payload: DiscoveryPayloadSchema,
      locations: (p) => [p.location_uri, inventoryRoot(p.inventory_uri)],
      run: (ctx) =>
        runDiscovery(ctx, {
          inventory: storeFor(inventoryRoot(ctx.payload.inventory_uri), options),
          memoryLimitMb: config.memory_limit_mb,
        }),
    }),
  ];
}
