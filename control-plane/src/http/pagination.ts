/**
 * The one pagination helper. Document 1's lists take `offset`/`limit` and return
 * `{items, total, offset, limit}`; document 2's (`/api/v1/catalogs...`) take `page_size`/`page_token`
 * and return `{items, total, page_size, next_page_token}`, paging by keyset (below).
 */
import { z } from "@hono/zod-openapi";
import { fromBase64Url, toBase64Url } from "@lakesmith/shared";
import { invalidField } from "./problem.ts";

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

// ---------------------------------------------------------------------------------------------
// Keyset pages (document 2's lists): `page_size` and `page_token` in, `{items, total, page_size,
// next_page_token}` out. The token is opaque to callers: base64url of the JSON array of the last
// item's sort key, so a page never skips or repeats a row when rows are added or removed between
// calls, and its cost does not grow with how deep the caller has paged.

export function keysetQuery(defaultSize: number, maxSize: number) {
  return z.object({
    page_size: z.coerce
      .number()
      .int()
      .min(1)
      .max(maxSize)
      .default(defaultSize)
      .openapi({ description: `Items per page (default ${defaultSize}, maximum ${maxSize}).` }),
    page_token: z.string().min(1).max(4096).optional().openapi({
      description:
        "`next_page_token` of the previous page, as it was given (opaque); absent for the first page. A token that is not one is a 422 naming `page_token`.",
    }),
  });
}

export function keysetPageOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      total: z.number().int().openapi({ description: "Items matching the filters, across all pages." }),
      page_size: z.number().int(),
      next_page_token: z.string().nullable().openapi({
        description: "Pass as `page_token` for the next page; null on the last page.",
      }),
    })
    .openapi(name);
}

export interface KeysetPage<T> {
  items: T[];
  total: number;
  page_size: number;
  next_page_token: string | null;
}

/** The token that resumes after the row whose sort key is `key`. */
export function pageToken(key: readonly string[]): string {
  return toBase64Url(new TextEncoder().encode(JSON.stringify(key)));
}

/**
 * The sort key a `page_token` resumes after (undefined for the first page); a 422 naming
 * `page_token` unless it is a token of a list whose key has `parts` parts.
 */
export function keyAfter(token: string | undefined, parts: number): string[] | undefined {
  if (token === undefined) return undefined;
  let key: unknown;
  try {
    key = JSON.parse(
      new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(fromBase64Url(token)),
    );
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== parts || !key.every((k) => typeof k === "string"))
    throw invalidField(
      "page_token",
      "not a page token of this list: pass `next_page_token` of its previous page unchanged, or leave it out for the first page",
    );
  return key;
}

/** The page of `rows` read with one row more than `size`, the extra row saying whether more follow. */
export function keysetPage<R, T>(
  rows: R[],
  size: number,
  total: number,
  keyOf: (row: R) => string[],
  view: (row: R) => T,
): KeysetPage<T> {
  const items = rows.slice(0, size);
  const last = items.at(-1);
  return {
    items: items.map(view),
    total,
    page_size: size,
    next_page_token: rows.length > size && last !== undefined ? pageToken(keyOf(last)) : null,
  };
}
