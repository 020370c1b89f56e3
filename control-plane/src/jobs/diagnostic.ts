/**
 * The diagnostic job kinds, `noop` (ends at once) and `sleep` (waits `payload.ms`): they check the
 * path from the control plane to the agents (`POST /api/v1/jobs`). A `uri` in the payload is a
 * location the job claims to touch, so it goes only to an agent allowed to use it.
 */
import { z } from "@hono/zod-openapi";
import { defineJobKind } from "./kinds.ts";

export const DIAGNOSTIC_KINDS = ["noop", "sleep"] as const;

export const DiagnosticPayloadSchema = z.strictObject({
  ms: z.number().int().min(0).max(3_600_000).optional(),
  uri: z.string().max(2048).optional().openapi({
    description:
      "A location the job claims to touch: it is offered only to an agent whose allow list covers it, and waits queued (`waiting_for` says so) while none is connected.",
  }),
  fail: z.boolean().optional(),
  retryable: z.boolean().optional(),
});

const diagnosticKind = (kind: (typeof DIAGNOSTIC_KINDS)[number]) =>
  defineJobKind({
    kind,
    label: kind,
    // What the route accepts is strict; jobs queued from code may carry more (the agent ignores it).
    payload: DiagnosticPayloadSchema.loose(),
    needs: (payload) => ({ locations: payload.uri === undefined ? [] : [payload.uri] }),
    retry: { maxAttempts: 3 },
  });

export const noopKind = diagnosticKind("noop");
export const sleepKind = diagnosticKind("sleep");
