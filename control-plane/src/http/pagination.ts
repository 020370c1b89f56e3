/**
 * The one pagination helper: `offset`/`limit` query parameters and the `{items, total, offset, limit}`
 * envelope every list endpoint returns.
 */
import { z } from "@hono/zod-openapi";

export function pageQuery(defaultLimit: number, maxLimit: number) {
  return z.object({
    offset: z.coerce.number().int().min(0).default(0).openapi({ description: "Items to skip.", example: 0 }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxLimit)
      .default(defaultLimit)
      .openapi({ description: `Items per page (default ${defaultLimit}, maximum ${maxLimit}).` }),
  });
}

export function pageOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      total: z.number().int().openapi({ description: "Items matching the filters, across all pages." }),
      offset: z.number().int(),
      limit: z.number().int(),
    })
    .openapi(name);
}

export interface Page<T> {
  items: T[];
  total: number;
  offset: number;
  limit: number;
}

/** A page of a list that is small enough to read whole (API keys, feature flags). */
export function pageOfAll<T>(all: readonly T[], offset: number, limit: number): Page<T> {
  return { items: all.slice(offset, offset + limit), total: all.length, offset, limit };
}
