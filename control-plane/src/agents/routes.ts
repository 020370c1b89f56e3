/**
 * Agents: Admins create agent tokens and revoke them; anyone may see which agents are connected
 * and what they hold. Agents themselves connect to `GET /api/v1/agents/connect` with their token
 * and speak the protocol in `shared/src/protocol.ts` over the WebSocket.
 */
import { z } from "@hono/zod-openapi";
import { access, principalId } from "../auth/access.ts";
import { AGENT_STATUSES } from "../db/schema.ts";
import { jsonBody, jsonResponse, problemResponse } from "../http/openapi.ts";
import { pageOf, pageQuery } from "../http/pagination.ts";
import { ApiError, unauthorized } from "../http/problem.ts";
import { defineRoute } from "../http/route.ts";
import { newRouter } from "../http/router.ts";

const tags = ["agents"];
const IdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "agt_4k9x2m7q0c1v8b3n5z6t" }),
});

const AgentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    token_prefix: z
      .string()
      .openapi({ description: "The first characters of the token, to tell tokens apart." }),
    status: z.enum(AGENT_STATUSES).openapi({
      description:
        "connected: takes work; draining: finishing what it holds, takes no new work; disconnected: no live connection " +
        "(an agent not heard from for three heartbeat intervals is reported disconnected).",
    }),
    version: z.string().nullable(),
    kinds: z.array(z.string()).openapi({ description: "Job kinds the agent announced." }),
    capabilities: z.array(z.string()),
    allow: z.array(z.string()).openapi({
      description:
        "Storage prefixes the agent's allow list permits, as it announced them: it is offered only jobs whose every location lies within one.",
    }),
    endpoints: z.array(z.string()).openapi({
      description: "Catalog and metastore endpoints it may reach, as it announced them.",
    }),
    capacity: z.number().int().openapi({ description: "Jobs it runs at once." }),
    connected_at: z.string().nullable(),
    last_seen_at: z.string().nullable(),
    created_at: z.string(),
    jobs: z
      .array(z.object({ id: z.string(), kind: z.string(), status: z.string() }))
      .openapi({ description: "Jobs offered or leased to it now." }),
  })
  .openapi("Agent");

const list = defineRoute({
  method: "get",
  path: "/api/v1/agents",
  tags,
  summary: "Agents with their status and the jobs they hold",
  access: access.read("agents"),
  request: { query: pageQuery(100, 1000) },
  responses: { 200: jsonResponse("Agents, newest first.", pageOf(AgentSchema, "AgentList")) },
});

const get = defineRoute({
  method: "get",
  path: "/api/v1/agents/{id}",
  tags,
  summary: "One agent",
  access: access.read("agents"),
  request: { params: IdParam },
  responses: { 200: jsonResponse("The agent.", AgentSchema), 404: problemResponse("No such agent.") },
});

const create = defineRoute({
  method: "post",
  path: "/api/v1/agents",
  tags,
  summary: "Create an agent token",
  description: "The token is returned once; run the agent with `lakesmith-agent --token <token>`.",
  access: access.admin("agents:write"),
  request: {
    body: jsonBody(z.strictObject({ name: z.string().trim().min(1).max(100) }).openapi("AgentCreate")),
  },
  responses: {
    201: jsonResponse(
      "The agent and its token.",
      z.object({ id: z.string(), name: z.string(), token: z.string() }).openapi("AgentCreated"),
    ),
  },
});

const revoke = defineRoute({
  method: "delete",
  path: "/api/v1/agents/{id}",
  tags,
  summary: "Revoke an agent's token and drop its connection",
  description: "Jobs it held go back to the queue when their leases lapse.",
  access: access.admin("agents:write"),
  request: { params: IdParam },
  responses: { 204: { description: "Revoked." }, 404: problemResponse("No such agent.") },
});

const connect = defineRoute({
  method: "get",
  path: "/api/v1/agents/connect",
  tags,
  summary: "The agents' WebSocket (agent protocol v1)",
  description:
    "Upgrades to a WebSocket after checking `Authorization: Bearer <agent token>`. Messages are JSON, one per frame, " +
    "as defined in `shared/src/protocol.ts`; the agent sends `hello` first. Close codes: 4000 protocol violation, " +
    "4001 unsupported protocol version, 4003 token revoked, 4009 replaced by a newer connection of the same agent.",
  access: access.public,
  responses: {
    101: { description: "Switching to the WebSocket protocol." },
    401: problemResponse("Missing, unknown or revoked agent token."),
    426: problemResponse("The request is not a WebSocket upgrade."),
  },
});

export const agentRoutes = newRouter()
  .openapi(list, async (c) => {
    const { offset, limit } = c.req.valid("query");
    return c.json(await c.var.services.agents.list(offset, limit), 200);
  })
  .openapi(connect, async (c) => {
    const header = c.req.header("authorization") ?? "";
    const token = /^Bearer (\S+)$/.exec(header.trim())?.[1];
    const agent = token ? await c.var.services.agents.authenticate(token) : undefined;
    if (!agent) throw unauthorized("Send a valid agent token: `Authorization: Bearer lsa_...`.");
    if (c.req.header("upgrade")?.toLowerCase() !== "websocket")
      throw new ApiError(426, "This endpoint only speaks WebSocket: send `Upgrade: websocket`.");
    const gateway = c.var.services.agentGateway;
    if (!gateway) throw new ApiError(503, "This control plane accepts no agent connections.");
    return gateway.accept(c, agent.id) as never;
  })
  .openapi(get, async (c) => c.json(await c.var.services.agents.get(c.req.valid("param").id), 200))
  .openapi(create, async (c) => {
    const { agent, token } = await c.var.services.agents.create(
      c.req.valid("json").name,
      principalId(c.var.principal),
    );
    return c.json({ id: agent.id, name: agent.name, token }, 201);
  })
  .openapi(revoke, async (c) => {
    const { id } = c.req.valid("param");
    await c.var.services.agents.revoke(id);
    c.var.services.hub.drop(id, "the agent's token was revoked");
    return c.body(null, 204);
  });
