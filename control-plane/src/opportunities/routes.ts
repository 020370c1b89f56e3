/**
 * Table opportunities (document 2, managed table detail; API keys `tables:read` / `tables:write`):
 * `GET /api/v1/tables/{table_id}/opportunities` and `POST /api/v1/tables/{table_id}/opportunities:scan`.
 */
import { access, principalId } from "../auth/access.ts";
import { jsonResponse, problemResponse } from "../http/openapi.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";
import { TableIdParam } from "../tables/routes.ts";
import { ScanTriggeredSchema, TableOpportunitiesSchema } from "./schemas.ts";
import { STALE_AFTER_DAYS } from "./service.ts";
import { opportunitiesView, scanJobView } from "./view.ts";

const tags = ["tables"];

const read = defineRoute({
  method: "get",
  path: "/api/v1/tables/{table_id}/opportunities",
  tags,
  summary: "What a crunch of the table would gain, as last measured",
  description:
    "The latest opportunity scan of the table: potential DRR measured by an agent from a bounded sample rewrite (with when and how), " +
    "small files under the target size, and missing ordering where the recipe names cluster columns. " +
    "**200** with `status: not_measured` and `measurement: null` before the first scan succeeds. " +
    `The policy engine measures a managed table again when the measurement is missing, older than ${STALE_AFTER_DAYS} days, ` +
    "or behind a version a Lakesmith job committed since; POST .../opportunities:scan measures now.",
  access: access.read("tables"),
  request: { params: TableIdParam },
  responses: {
    200: jsonResponse("The table's opportunities.", TableOpportunitiesSchema),
    404: problemResponse("No such table."),
  },
});

const scan = defineRoute({
  method: "post",
  path: "/api/v1/tables/{table_id}/opportunities:scan",
  tags,
  summary: "Measure the table's opportunities now",
  description:
    "Answers **202 Accepted** with the queued `opportunity_scan` job (trigger `manual`); an agent allowed to read the table measures it " +
    "and writes nothing to it. Follow it with GET /api/v1/jobs/{job_id}; its result becomes the table's measurement (GET .../opportunities). " +
    "**409** while another scan of the table is queued or running (the detail names it).",
  access: access.write("tables"),
  request: { params: TableIdParam },
  responses: {
    202: jsonResponse("Queued.", ScanTriggeredSchema),
    404: problemResponse("No such table."),
    409: problemResponse("A scan of the table is active, or its catalog link is gone."),
  },
});

export const opportunityRoutes = newRouter()
  .openapi(read, async (c) => {
    const tableId = c.req.valid("param").table_id;
    const { latest, active } = await c.var.services.opportunities.ofTable(tableId);
    return c.json(opportunitiesView(tableId, latest, active), 200);
  })
  .openapi(scan, async (c) => {
    const tableId = c.req.valid("param").table_id;
    const job = await c.var.services.opportunities.scanNow(tableId, principalId(c.var.principal));
    return c.json({ ...scanJobView(job), table_id: tableId }, 202);
  });
