/** Small builders for the request and response parts of route definitions. */
import type { z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import { ProblemSchema } from "./problem.ts";

/** A required JSON request body. */
export const jsonBody = <S extends z.ZodType>(schema: S) => ({
  content: { "application/json": { schema } },
  required: true,
});

/** A JSON response. */
export const jsonResponse = <S extends z.ZodType>(description: string, schema: S) => ({
  description,
  content: { "application/json": { schema } },
});

/** A problem+json error response. */
export const problemResponse = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ProblemSchema } },
});

/**
 * Sends JSON that was serialized ahead of time, typed as the route's JSON response. For hot read
 * paths whose body changes rarely: serialize once per version instead of once per request.
 */
export function preserializedJson<T>(c: Context, text: string): Response & TypedResponse<T, 200, "json"> {
  return c.body(text, 200, { "content-type": "application/json" }) as unknown as Response &
    TypedResponse<T, 200, "json">;
}
