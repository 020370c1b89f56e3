/** Small builders for the request and response parts of route definitions. */
import type { z } from "@hono/zod-openapi";
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
