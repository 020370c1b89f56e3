/**
 * Discovery routes (document 1, "Object maintenance"): discover a location, its discovered
 * prefixes, and its attempts ("discovery schedules") with their state, plan, effective config and
 * transitions (`service.ts` states them). API keys need `object-maintenance:read` or `:write`.
 */
import { access, principalId } from "../../auth/access.ts";
import { jsonResponse, problemResponse } from "../../http/openapi.ts";
import { pageOf, pageQuery } from "../../http/pagination.ts";
import { defineRoute } from "../../http/route.ts";
import { newRouter } from "../../http/router.ts";
import { LocationIdParam } from "../schemas.ts";
import { effectiveConfigOf, planOf } from "./plan.ts";
import {
  DiscoveredPrefixSchema,
  DiscoveredQuery,
  DiscoveryPlanSchema,
  DiscoveryScheduleSchema,
  DiscoveryStateSchema,
  EffectiveConfigSchema,
  PlanQuery,
  ScheduleIdParam,
  SkipBinParams,
} from "./schemas.ts";
import { discoveredView, scheduleView, stateView } from "./view.ts";

const tags = ["object maintenance"];
const BASE = "/api/v1/object-maintenance";
const SCHEDULE = `${BASE}/discovery/schedules/{schedule_id}`;
const read = access.read("object-maintenance");
const write = access.write("object-maintenance");
const noLocation = { 404: problemResponse("No location with this id.") };
const noSchedule = { 404: problemResponse("No discovery schedule with this id.") };
const invalidTransition = {
  409: problemResponse("The attempt's status does not allow this; the detail names it."),
};

const discover = defineRoute({
  method: "post",
  path: `${BASE}/locations/{location_id}/discover`,
  tags,
  summary: "Discover a location's prefixes (in the background)",
  description:
    "Queues a discovery attempt: an agent reads the newest complete S3 Inventory report under the location's inventory URI, groups its objects into prefixes and the plane filters them. " +
    "Poll `GET .../discovery/schedules/{schedule_id}/state`. A Pending location becomes Discovering, then Active when the attempt completes.",
  access: write,
  request: { params: LocationIdParam },
  responses: {
    202: jsonResponse("Queued.", DiscoveryScheduleSchema),
    ...noLocation,
    409: problemResponse(
      "The location is archived, or an attempt of it is queued, running or paused (named).",
    ),
    422: problemResponse("The location is use_as_registered: nothing to discover."),
  },
});

const discovered = defineRoute({
  method: "get",
  path: `${BASE}/locations/{location_id}/discovered-prefixes`,
  tags,
  summary: "The prefixes of the location's latest completed discovery",
  description:
    "Every prefix the latest completed attempt found, ordered by URI, each with its filter outcome; `filter` keeps the survivors or one reason. Empty before any discovery completed.",
  access: read,
  request: { params: LocationIdParam, query: DiscoveredQuery },
  responses: {
    200: jsonResponse(
      "A page of discovered prefixes, with the attempt they come from.",
      pageOf(DiscoveredPrefixSchema, "DiscoveredPrefixPage").extend({
        schedule_id: DiscoveryScheduleSchema.shape.id.nullable(),
      }),
    ),
    ...noLocation,
  },
});

const listSchedules = defineRoute({
  method: "get",
  path: `${BASE}/locations/{location_id}/discovery/schedules`,
  tags,
  summary: "A location's discovery attempts, newest first",
  access: read,
  request: { params: LocationIdParam, query: pageQuery(50, 1000) },
  responses: {
    200: jsonResponse("A page of attempts.", pageOf(DiscoveryScheduleSchema, "DiscoverySchedulePage")),
    ...noLocation,
  },
});

const getSchedule = defineRoute({
  method: "get",
  path: SCHEDULE,
  tags,
  summary: "A discovery attempt",
  access: read,
  request: { params: ScheduleIdParam },
  responses: { 200: jsonResponse("The attempt.", DiscoveryScheduleSchema), ...noSchedule },
});

const getState = defineRoute({
  method: "get",
  path: `${SCHEDULE}/state`,
  tags,
  summary: "A discovery attempt's live progress",
  access: read,
  request: { params: ScheduleIdParam },
  responses: { 200: jsonResponse("Its progress.", DiscoveryStateSchema), ...noSchedule },
});

const getPlan = defineRoute({
  method: "get",
  path: `${SCHEDULE}/plan`,
  tags,
  summary: "A discovery attempt's plan summary and bins",
  access: read,
  request: { params: ScheduleIdParam, query: PlanQuery },
  responses: { 200: jsonResponse("Its plan.", DiscoveryPlanSchema), ...noSchedule },
});

const getEffectiveConfig = defineRoute({
  method: "get",
  path: `${SCHEDULE}/effective-config`,
  tags,
  summary: "What a discovery attempt runs with, each value with its layer",
  access: read,
  request: { params: ScheduleIdParam },
  responses: { 200: jsonResponse("Its configuration.", EffectiveConfigSchema), ...noSchedule },
});

const transition = (
  verb: "pause" | "resume" | "restart" | "complete",
  summary: string,
  description: string,
) =>
  defineRoute({
    method: "post",
    path: `${SCHEDULE}/${verb}`,
    tags,
    summary,
    description,
    access: write,
    request: { params: ScheduleIdParam },
    responses: {
      200: jsonResponse("The attempt after it.", DiscoveryScheduleSchema),
      ...noSchedule,
      ...invalidTransition,
    },
  });

const pause = transition(
  "pause",
  "Pause a discovery",
  "queued or running → paused: its job stops; the bins done stay done.",
);
const resume = transition(
  "resume",
  "Resume a paused discovery",
  "paused → queued: a new job reads the same report, passing over the bins done and skipped.",
);
const restart = transition(
  "restart",
  "Restart a discovery from scratch",
  "any → queued: the current job is cancelled, bins and aggregates cleared, and a new job reads the newest report. 409 when another attempt of the location is active.",
);
const complete = transition(
  "complete",
  "Complete a discovery with what it has aggregated",
  "queued, running or paused → completed (the discovery driver's terminal callback): the bins done so far are applied as a completed run; prefixes are marked missing only when every bin was read. Its job is cancelled.",
);

const skipBin = defineRoute({
  method: "post",
  path: `${SCHEDULE}/skip-bin/{bin_id}`,
  tags,
  summary: "Skip one bin (a wedged inventory data file)",
  description:
    "The bin's objects are left out of this attempt; a running job passes it over from its next part. The attempt's status does not change. 200 again for a bin skipped already.",
  access: write,
  request: { params: SkipBinParams },
  responses: {
    200: jsonResponse("The attempt.", DiscoveryScheduleSchema),
    404: problemResponse(
      "No such attempt, or no such bin in its plan (bins are known once it has read its report).",
    ),
    409: problemResponse("The attempt has ended, or the bin was read already."),
  },
});

export const discoveryRoutes = newRouter()
  .openapi(discover, async (c) => {
    const attempt = await c.var.services.discovery.discover(
      c.req.valid("param").location_id,
      principalId(c.var.principal),
    );
    return c.json(scheduleView(attempt), 202);
  })
  .openapi(discovered, async (c) => {
    const { filter, offset, limit } = c.req.valid("query");
    const page = await c.var.services.discovery.discovered(
      c.req.valid("param").location_id,
      filter === "all" ? undefined : filter,
      offset,
      limit,
    );
    return c.json(
      {
        items: page.items.map(discoveredView),
        total: page.total,
        offset,
        limit,
        schedule_id: page.attempt?.id ?? null,
      },
      200,
    );
  })
  .openapi(listSchedules, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.discovery.list(c.req.valid("param").location_id, offset, limit);
    return c.json({ ...page, items: page.items.map(scheduleView) }, 200);
  })
  .openapi(getSchedule, async (c) =>
    c.json(scheduleView(await c.var.services.discovery.get(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(getState, async (c) =>
    c.json(stateView(await c.var.services.discovery.get(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(getPlan, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const attempt = await c.var.services.discovery.get(c.req.valid("param").schedule_id);
    return c.json(await planOf(c.var.services.db, c.var.services.clock.now(), attempt, offset, limit), 200);
  })
  .openapi(getEffectiveConfig, async (c) => {
    const { discovery, db, config } = c.var.services;
    const attempt = await discovery.get(c.req.valid("param").schedule_id);
    const location = await discovery.location(attempt.locationId);
    return c.json(await effectiveConfigOf(db, (await config.get()).values, attempt, location), 200);
  })
  .openapi(pause, async (c) =>
    c.json(scheduleView(await c.var.services.discovery.pause(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(resume, async (c) =>
    c.json(scheduleView(await c.var.services.discovery.resume(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(restart, async (c) =>
    c.json(scheduleView(await c.var.services.discovery.restart(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(complete, async (c) =>
    c.json(scheduleView(await c.var.services.discovery.complete(c.req.valid("param").schedule_id)), 200),
  )
  .openapi(skipBin, async (c) => {
    const { schedule_id, bin_id } = c.req.valid("param");
    return c.json(scheduleView(await c.var.services.discovery.skipBin(schedule_id, bin_id)), 200);
  });
