/**
 * Catalog URLs as the spec builds them: `<uri>/v1/<prefix>/namespaces/<namespace>/tables/<table>`,
 * where `<prefix>` comes from `/v1/config` (absent: `<uri>/v1/namespaces`) and a namespace is its
 * levels, each percent-encoded, joined by the encoded separator (`%1F` unless the config's
 * `namespace-separator` override says otherwise).
 *
 * Names that a URL can't carry are refused before anything is sent: an empty level or table name
 * (an empty path segment), a level holding the separator itself (it would split in two), and a
 * whole segment of `.` or `..`, which every URL parser resolves as a relative path step, however
 * it is percent-encoded, so the request would reach another resource.
 */
import { RestCatalogError } from "./errors.ts";

/** The unit separator, the spec's default between namespace levels. */
export const DEFAULT_NAMESPACE_SEPARATOR = "\u001f";

/** The base URL of catalog routes: `<uri>/v1/<prefix>` (or `<uri>/v1` without a prefix). */
export function catalogBase(uri: string, prefix: string | undefined): string {
  const trimmed = prefix?.replace(/^\/+|\/+$/g, "");
  return trimmed ? `${uri}/v1/${trimmed}` : `${uri}/v1`;
}

/**
 * One path segment for a namespace.
 *
 * @example
 * namespaceSegment(["sales data", "q1.2024"], "\u001f", "listTables"); // "sales%20data%1Fq1.2024"
 */
export function namespaceSegment(levels: readonly string[], separator: string, operation: string): string {
  if (levels.length === 0) throw invalidName(operation, "a namespace needs at least one level");
  for (const level of levels) {
    if (level === "") throw invalidName(operation, `namespace ${show(levels)} has an empty level`);
    if (level.includes(separator))
      throw invalidName(operation, `namespace level ${JSON.stringify(level)} holds the namespace separator`);
  }
  return segment(levels.map(encodeURIComponent).join(encodeURIComponent(separator)), levels, operation);
}

/** One path segment for a table name. */
export function tableSegment(name: string, operation: string): string {
  if (name === "") throw invalidName(operation, "a table name can't be empty");
  return segment(encodeURIComponent(name), [name], operation);
}

/** A namespace as the `parent` query parameter wants it: levels joined by the separator, unencoded. */
export function namespaceParam(levels: readonly string[], separator: string): string {
  return levels.join(separator);
}

function segment(encoded: string, name: readonly string[], operation: string): string {
  if (encoded === "." || encoded === "..")
    throw invalidName(operation, `${show(name)} would be read as a relative path step in the URL`);
  return encoded;
}

function invalidName(operation: string, why: string): RestCatalogError {
  return new RestCatalogError("invalid_name", operation, `${operation}: ${why}; nothing was sent`);
}

function show(levels: readonly string[]): string {
  return JSON.stringify(levels.length === 1 ? levels[0] : levels);
}
