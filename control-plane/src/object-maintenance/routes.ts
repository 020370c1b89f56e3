/**
 * Object maintenance routes (document 1, "Object maintenance"): locations, their managed prefixes,
 * enabling a prefix, and prefix policies with their versions. API keys need
 * `object-maintenance:read` or `object-maintenance:write`.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  LOCATION_PAGE_MAX,
  LocationCreateSchema,
  LocationIdParam,
  LocationListQuery,
  LocationPrefixParams,
  LocationSchema,
  LocationUpdateSchema,
  PolicySchema,
  PolicyUpsertSchema,
  PolicyVersionsQuery,
  PREFIX_PAGE_MAX,
  PrefixDetailSchema,
  PrefixIdParam,
  PrefixListQuery,
  PrefixSchema,
} from "./schemas.ts";
import { locationView, policyView, prefixDetailView, prefixView } from "./view.ts";

const tags = ["object maintenance"];
const BASE = "/api/v1/object-maintenance";
const noLocation = { 404: problemResponse("No location with this id.") };
const noPrefix = { 404: problemResponse("No prefix with this id.") };
const read = access.read("object-maintenance");
const write = access.write("object-maintenance");

const createLocation = defineRoute({
  method: "post",
  path: `${BASE}/locations`,
  tags,
  summary: "Register a location",
  description:
    "use_as_registered (default): the location is Active at once, its URI its one managed prefix (unmanaged until enabled or given a policy). " +
    "inventory_report: Pending until its first discovery. Methods and formats the spec announces but that are not built are a 422 naming the field: " +
    "discovery_method direct_listing, inventory_format orc or csv, input_format parquet.",
  access: write,
  request: { body: jsonBody(LocationCreateSchema) },
  responses: {
    201: jsonResponse("Registered.", LocationSchema),
    409: problemResponse("A location with this name exists, or the URI is a prefix of another location."),
    422: problemResponse("A missing or malformed field, or one not yet supported; `errors` names it."),
  },
});

const listLocations = defineRoute({
  method: "get",
  path: `${BASE}/locations`,
  tags,
  summary: "List locations",
  description: `Ordered by name; \`status\` filters. Maximum \`limit\` is ${LOCATION_PAGE_MAX}.`,
  access: read,
  request: { query: LocationListQuery },
  responses: { 200: jsonResponse("A page of locations.", pageOf(LocationSchema, "LocationPage")) },
});

const getLocation = defineRoute({
  method: "get",
  path: `${BASE}/locations/{location_id}`,
  tags,
  summary: "Get a location",
  access: read,
  request: { params: LocationIdParam },
  responses: { 200: jsonResponse("The location.", LocationSchema), ...noLocation },
});

const updateLocation = defineRoute({
  method: "patch",
  path: `${BASE}/locations/{location_id}`,
  tags,
  summary: "Update a location (partial); archive or un-archive it",
  description:
    "`status: Archived` archives the location: it is no longer processed, its active prefixes become paused, nothing is deleted. " +
    "`status: Active` on an archived location restores the status it had and resumes the prefixes archiving paused. Any other status change is a 422.",
  access: write,
  request: { params: LocationIdParam, body: jsonBody(LocationUpdateSchema) },
  responses: {
    200: jsonResponse("The updated location.", LocationSchema),
    ...noLocation,
    409: problemResponse("Another location has this name."),
    422: problemResponse("A malformed field, or a status change that is not archive or un-archive."),
  },
});

const deleteLocation = defineRoute({
  method: "delete",
  path: `${BASE}/locations/{location_id}`,
  tags,
  summary: "Delete a location; its prefixes are kept",
  description:
    "The location goes; its managed prefixes stay, with `location_id` null (registering a location with a kept prefix's URI takes it back). Nothing in storage is touched.",
  access: write,
  request: { params: LocationIdParam },
  responses: { 204: { description: "Deleted." }, ...noLocation },
});

const locationPrefixes = defineRoute({
  method: "get",
  path: `${BASE}/locations/{location_id}/managed-prefixes`,
  tags,
  summary: "Managed prefixes of a location",
  description: `Ordered by URI. Maximum \`limit\` is ${PREFIX_PAGE_MAX}.`,
  access: read,
  request: { params: LocationIdParam, query: pageQuery(100, PREFIX_PAGE_MAX) },
  responses: {
    200: jsonResponse("A page of prefixes.", pageOf(PrefixSchema, "ManagedPrefixPage")),
    ...noLocation,
  },
});

const listPrefixes = defineRoute({
  method: "get",
  path: `${BASE}/prefixes`,
  tags,
  summary: "Managed prefixes across locations",
  description: `Filters: \`location_id\`, \`management_state\`, \`source_state\`. Ordered by URI. Maximum \`limit\` is ${PREFIX_PAGE_MAX}.`,
  access: read,
  request: { query: PrefixListQuery },
  responses: { 200: jsonResponse("A page of prefixes.", pageOf(PrefixSchema, "ManagedPrefixListPage")) },
});

const getPrefix = defineRoute({
  method: "get",
  path: `${BASE}/prefixes/{prefix_id}`,
  tags,
  summary: "A prefix with its location's summary and its policy",
  access: read,
  request: { params: PrefixIdParam },
  responses: { 200: jsonResponse("The prefix.", PrefixDetailSchema), ...noPrefix },
});

const enable = defineRoute({
  method: "post",
  path: `${BASE}/locations/{location_id}/prefixes/{prefix_id}/enable`,
  tags,
  summary: "Enable a prefix (make it active)",
  description:
    "201 when the prefix became active (from unmanaged, paused or error); 200 when it was active already (nothing changes). " +
    "422 when the transition is invalid: the location is archived (un-archive it first) or the prefix's source is missing.",
  access: write,
  request: { params: LocationPrefixParams },
  responses: {
    200: jsonResponse("Already active; nothing changed.", PrefixSchema),
    201: jsonResponse("Newly active.", PrefixSchema),
    404: problemResponse("No such location, or no such prefix of it."),
    422: problemResponse("An invalid lifecycle transition; the detail says why."),
  },
});

const getPolicy = defineRoute({
  method: "get",
  path: `${BASE}/prefixes/{prefix_id}/policy`,
  tags,
  summary: "The prefix's active policy and its version",
  access: read,
  request: { params: PrefixIdParam },
  responses: {
    200: jsonResponse("The active version.", PolicySchema),
    404: problemResponse("No such prefix, or it has no policy."),
  },
});

const putPolicy = defineRoute({
  method: "put",
  path: `${BASE}/prefixes/{prefix_id}/policy`,
  tags,
  summary: "Create or replace the prefix's policy (a new version)",
  description:
    "Appends version N+1 and deactivates version N in one transaction (two PUTs at once get two versions, never one number twice). " +
    "An unmanaged prefix becomes active. `convert.target_prefix` must be on the prefix's store and outside it (422 naming it otherwise).",
  access: write,
  request: { params: PrefixIdParam, body: jsonBody(PolicyUpsertSchema) },
  responses: {
    200: jsonResponse("The new active version.", PolicySchema),
    ...noPrefix,
    422: problemResponse("A malformed policy; `errors` names the field."),
  },
});

const deletePolicy = defineRoute({
  method: "delete",
  path: `${BASE}/prefixes/{prefix_id}/policy`,
  tags,
  summary: "Drop the prefix's policy and all its versions",
  description: "The prefix keeps its management state; with no policy nothing runs on it.",
  access: write,
  request: { params: PrefixIdParam },
  responses: {
    204: { description: "Dropped." },
    404: problemResponse("No such prefix, or it has no policy."),
  },
});

const policyVersions = defineRoute({
  method: "get",
  path: `${BASE}/prefixes/{prefix_id}/policy/versions`,
  tags,
  summary: "The prefix's policy versions, newest first",
  access: read,
  request: { params: PrefixIdParam, query: PolicyVersionsQuery },
  responses: {
    200: jsonResponse("A page of versions.", pageOf(PolicySchema, "PrefixPolicyPage")),
    ...noPrefix,
  },
});

export const objectMaintenanceRoutes = newRouter()
  .openapi(createLocation, async (c) => {
    const row = await c.var.services.objectMaintenance.createLocation(
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(locationView(row), 201);
  })
  .openapi(listLocations, async (c) => {
    const { status, offset, limit } = c.req.valid("query");
    const page = await c.var.services.objectMaintenance.listLocations(status, offset, limit);
    return c.json({ ...page, items: page.items.map(locationView) }, 200);
  })
  .openapi(getLocation, async (c) =>
    c.json(
      locationView(await c.var.services.objectMaintenance.location(c.req.valid("param").location_id)),
      200,
    ),
  )
  .openapi(updateLocation, async (c) => {
    const row = await c.var.services.objectMaintenance.updateLocation(
      c.req.valid("param").location_id,
      c.req.valid("json"),
    );
    return c.json(locationView(row), 200);
  })
  .openapi(deleteLocation, async (c) => {
    await c.var.services.objectMaintenance.deleteLocation(c.req.valid("param").location_id);
    return c.body(null, 204);
  })
  .openapi(locationPrefixes, async (c) => {
    const { location_id } = c.req.valid("param");
    const { offset, limit } = c.req.valid("query");
    const service = c.var.services.objectMaintenance;
    await service.location(location_id);
    const page = await service.listPrefixes({ locationId: location_id }, offset, limit);
    return c.json({ ...page, items: page.items.map(prefixView) }, 200);
  })
  .openapi(listPrefixes, async (c) => {
    const { location_id, management_state, source_state, offset, limit } = c.req.valid("query");
    const page = await c.var.services.objectMaintenance.listPrefixes(
      { locationId: location_id, managementState: management_state, sourceState: source_state },
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(prefixView) }, 200);
  })
  .openapi(getPrefix, async (c) =>
    c.json(
      prefixDetailView(await c.var.services.objectMaintenance.prefixDetail(c.req.valid("param").prefix_id)),
      200,
    ),
  )
  .openapi(enable, async (c) => {
    const { location_id, prefix_id } = c.req.valid("param");
    const { prefix, created } = await c.var.services.objectMaintenance.enable(location_id, prefix_id);
    return created ? c.json(prefixView(prefix), 201) : c.json(prefixView(prefix), 200);
  })
  .openapi(getPolicy, async (c) =>
    c.json(policyView(await c.var.services.objectMaintenance.policy(c.req.valid("param").prefix_id)), 200),
  )
  .openapi(putPolicy, async (c) => {
    const row = await c.var.services.objectMaintenance.putPolicy(
      c.req.valid("param").prefix_id,
      c.req.valid("json"),
      principalId(c.var.principal),
    );
    return c.json(policyView(row), 200);
  })
  .openapi(deletePolicy, async (c) => {
    await c.var.services.objectMaintenance.deletePolicy(c.req.valid("param").prefix_id);
    return c.body(null, 204);
  })
  .openapi(policyVersions, async (c) => {
    const { offset, limit } = c.req.valid("query");
    const page = await c.var.services.objectMaintenance.policyVersions(
      c.req.valid("param").prefix_id,
      offset,
      limit,
    );
    return c.json({ ...page, items: page.items.map(policyView) }, 200);
  });
