/**
 * Document 2's ids for what syncs wrote to `catalog_tables`. Two connections can both have a
 * catalog `main`, so a catalog is named by its connection and its name together:
 *
 * - `catalog_id` = `cat_` + base64url(`<connection_id>:<catalog name>`), without padding. Stable
 *   (the same pair always gives the same id), URL-safe, and decoded rather than looked up: there is
 *   no table of catalogs, a catalog exists while one of its synced tables is live.
 * - `table_id` = `<catalog_id>.<schema>.<name>`: the table's `full_name` with its leading catalog
 *   name replaced by the catalog id. Unique across connections; URL-encode it when a part holds `/`.
 *
 * Connection ids never hold `:` (`newId`), so the first `:` ends the connection id.
 */
import { fromBase64Url, toBase64Url } from "@lakesmith/shared";

const PREFIX = "cat_";

export interface CatalogRef {
  connectionId: string;
  catalog: string;
}

/** Ids already encoded: a page of tables shares a few catalogs, and encoding one costs. */
const encoded = new Map<string, string>();
const ENCODED_MAX = 10_000;

/** @example catalogId({ connectionId: "con_4k9x", catalog: "main" }) // "cat_Y29uXzRrOXg6bWFpbg" */
export function catalogId(ref: CatalogRef): string {
  const text = `${ref.connectionId}:${ref.catalog}`;
  let id = encoded.get(text);
  if (id === undefined) {
    if (encoded.size >= ENCODED_MAX) encoded.clear();
    id = PREFIX + toBase64Url(new TextEncoder().encode(text));
    encoded.set(text, id);
  }
  return id;
}

/** The connection and catalog a `catalog_id` names; undefined when it is not one. */
export function parseCatalogId(id: string): CatalogRef | undefined {
  if (!id.startsWith(PREFIX) || !/^[A-Za-z0-9_-]+$/.test(id.slice(PREFIX.length))) return undefined;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      fromBase64Url(id.slice(PREFIX.length)),
    );
  } catch {
    return undefined;
  }
  const colon = text.indexOf(":");
  if (colon <= 0 || colon === text.length - 1) return undefined;
  const ref = { connectionId: text.slice(0, colon), catalog: text.slice(colon + 1) };
  // One spelling per catalog: an id that re-encodes differently (padding, stray bits) is not one.
  return catalogId(ref) === id ? ref : undefined;
}

/** The `table_id` of a synced table of the catalog `ref` whose `full_name` is `fullName`. */
export function tableId(ref: CatalogRef, fullName: string): string {
  const rest = fullName.startsWith(`${ref.catalog}.`) ? fullName.slice(ref.catalog.length + 1) : fullName;
  return `${catalogId(ref)}.${rest}`;
}

/** The `full_name` a `table_id` names within the catalog `ref`; undefined when it is not one of its ids. */
export function fullNameOf(ref: CatalogRef, id: string): string | undefined {
  const head = `${catalogId(ref)}.`;
  if (!id.startsWith(head) || id.length === head.length) return undefined;
  return `${ref.catalog}.${id.slice(head.length)}`;
}

/**
 * The catalog and `full_name` a `table_id` names, without knowing its catalog first: the catalog id
 * holds no `.`, so the first `.` ends it.
 *
 * @example parseTableId("cat_Y29uXzRrOXg6bWFpbg.sales.orders") // { ref: {connectionId: "con_4k9x", catalog: "main"}, fullName: "main.sales.orders" }
 */
export function parseTableId(id: string): { ref: CatalogRef; fullName: string } | undefined {
  const dot = id.indexOf(".");
  const ref = dot > 0 ? parseCatalogId(id.slice(0, dot)) : undefined;
  const fullName = ref ? fullNameOf(ref, id) : undefined;
  return ref && fullName ? { ref, fullName } : undefined;
}
