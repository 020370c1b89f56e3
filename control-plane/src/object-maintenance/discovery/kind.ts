/**
 * The `discovery` job kind (`@lakesmith/shared/discovery`): routed to an agent allowed the location
 * and the inventory's configuration folder; its output comes in parts (`record.ts`). One attempt
 * per location runs at a time (the attempt rows decide, `service.ts`), so the kind declares no
 * exclusivity: a restart queues its new job while the old one is still being cancelled.
 */
import { DISCOVERY_KIND, DiscoveryPayloadSchema, inventoryRoot } from "@lakesmith/shared/discovery";
import { defineJobKind } from "../../jobs/kinds.ts";
import { recordDiscovery, recordDiscoveryPart } from "./record.ts";

export const discoveryKind = defineJobKind({
  kind: DISCOVERY_KIND,
  label: "discovery",
  payload: DiscoveryPayloadSchema,
  needs: (payload) => ({ locations: [payload.location_uri, inventoryRoot(payload.inventory_uri)] }),
  part: recordDiscoveryPart,
  finish: recordDiscovery,
  retry: { maxAttempts: 3 },
});
