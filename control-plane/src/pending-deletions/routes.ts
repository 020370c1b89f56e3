/**
 * Pending deletions (document 1): `GET /api/v1/pending-deletions`, `.../stats`, `.../{deletion_id}`
 * and `POST .../{deletion_id}/recover`. API keys need `deletions:read` or `deletions:write`.
 */
import { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf } from "../http/pagination.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import {
  PENDING_DELETION_PAGE_MAX,
  PendingDeletionQuery,
  PendingDeletionSchema,
  PendingDeletionStatsSchema,
  RecoverRequestSchema,
  STATUS_DESCRIPTION,
  StatsQuery,
} from "./schemas.ts";
import { pendingDeletionView } from "./view.ts";

const tags = ["pending deletions"];
const DeletionIdParam = z.object({
  deletion_id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "deletion_id", in: "path" }, example: "del_4k9x2m7q0c1v8b3n5z6t" }),
});

const list = defineRoute({
  method: "get",
  path: "/api/v1/pending-deletions",
  tags,
  summary: "Files proposed for deletion, newest first",
  description:
    "Every file a real vacuum, partition expiration, Hive crunch or removal of a managed prefix's converted inputs proposed is one record (a table's, `table_id`, or a prefix's, `prefix_id`); records are never removed (a DELETED record is the audit of the delete) " +
    "and outlive their table. Filters combine. " +
    `Default \`limit\` 20, maximum ${PENDING_DELETION_PAGE_MAX}.\n\n${STATUS_DESCRIPTION}`,
  access: access.read("deletions"),
  request: { query: PendingDeletionQuery },
  responses: {
    200: jsonResponse("A page of records.", pageOf(PendingDeletionSchema, "PendingDeletionPage")),
  },
});

const stats = defineRoute({
  method: "get",
  path: "/api/v1/pending-deletions/stats",
  tags,
  summary: "Pending deletions counted by status",
  description:
    "Counts and bytes per status (every status present, 0 when none), of every table and managed prefix, of `table_id` or of `prefix_id` (an unknown one counts zero), " +
    "and `eligible_now`: how many records POST /api/v1/vacuum/hard-delete would pick at this moment.",
  access: access.read("deletions"),
  request: { query: StatsQuery },
  responses: { 200: jsonResponse("Counts by status.", PendingDeletionStatsSchema) },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/pending-deletions/{deletion_id}",
  tags,
  summary: "One pending deletion",
  access: access.read("deletions"),
  request: { params: DeletionIdParam },
  responses: {
    200: jsonResponse("The record.", PendingDeletionSchema),
    404: problemResponse("No record with this id."),
  },
});

const recover = defineRoute({
  method: "post",
  path: "/api/v1/pending-deletions/{deletion_id}/recover",
  tags,
  summary: "Keep a PENDING_DELETE record's file",
  description:
    "Only PENDING_DELETE records can be recovered; any other status is a 409 that names it. Of two recovers at the same moment (or a recover and a hard-delete), exactly one wins.\n\n" +
    "- A **vacuum** record is RECOVERED at once (**200**): its file was not part of the table, keeping it is all there is to do. It is never hard-deleted, and vacuum never proposes its path again.\n" +
    "- A **partition expiration** record becomes RECOVERING and a `recover` job is queued (**202**, `recover_job_id`): an agent commits the file back into the table. " +
    "When the job succeeds the record is RECOVERED; when it fails or is cancelled, the record is PENDING_DELETE again with the error as `note`. " +
    "409 when the table was deleted (there is no table to commit to).\n\n" +
    "`reason` is recorded on the record with who asked.",
  access: access.write("deletions"),
  request: { params: DeletionIdParam, body: jsonBody(RecoverRequestSchema) },
  responses: {
    200: jsonResponse("A vacuum record, RECOVERED.", PendingDeletionSchema),
    202: jsonResponse("An expiration record, RECOVERING; the recover job is queued.", PendingDeletionSchema),
    404: problemResponse("No record with this id."),
    409: problemResponse(
      "The record is not PENDING_DELETE (the detail names its status), or its table was deleted.",
    ),
  },
});

export const pendingDeletionRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit, ...filter } = c.req.valid("query");
    const page = await c.var.services.pendingDeletions.list(filter, offset, limit);
    return c.json({ ...page, items: page.items.map(pendingDeletionView) }, 200);
  })
  // Before `{deletion_id}`, so `stats` is never taken for an id.
  .openapi(stats, async (c) => {
    const { table_id, prefix_id } = c.req.valid("query");
    const s = await c.var.services.pendingDeletions.stats(table_id, prefix_id);
    return c.json(
      {
        table_id: s.tableId,
        prefix_id: s.prefixId,
        counts: s.counts,
        bytes: s.bytes,
        total: s.total,
        eligible_now: s.eligibleNow,
      },
      200,
    );
  })
  .openapi(get, async (c) =>
    c.json(
      pendingDeletionView(await c.var.services.pendingDeletions.get(c.req.valid("param").deletion_id)),
      200,
    ),
  )
  .openapi(recover, async (c) => {
    const { record, queued } = await c.var.services.pendingDeletions.recover(
      c.req.valid("param").deletion_id,
      c.req.valid("json").reason,
      principalId(c.var.principal),
    );
    return queued ? c.json(pendingDeletionView(record), 202) : c.json(pendingDeletionView(record), 200);
  });
