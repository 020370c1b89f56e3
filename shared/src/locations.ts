/**
 * Storage locations and service endpoints, compared the same way by the agent (its allow list, the
 * last word on what it touches) and the control plane (which routes a job only to agents allowed
 * every location and endpoint it names).
 *
 * - A location is `scheme://root/segments`: `file:///path` (no root), or a bucket-style store
 *   (`s3://bucket/key`, `gs://bucket/key`, `azure://account/container/key`, ...). Dot segments of a
 *   `file` path are resolved and percent-escapes decoded; object keys keep their segments literally
 *   and refuse `.`/`..` (stores keep them, other tools collapse them).
 * - One canonical scheme per store, so every spelling of a place compares equal: `gcs://` is `gs://`;
 *   Azure's `abfs[s]://<container>@<account>.dfs.core.windows.net/<key>` (Hadoop's spelling) is
 *   `azure://<account>/<container>/<key>` (root `account/container`). Other Azure spellings (`az://`,
 *   `wasb[s]://`, ABFS hosts other than `dfs.core.windows.net`) are refused, naming the one to use:
 *   without the account or on another cloud's endpoint they can't be placed with certainty.
 * - Anything that can't be read with certainty is refused rather than guessed at: `file://` on
 *   another host or with a query, fragment or backslash, and a NUL anywhere.
 * - Case: the scheme and the root are compared case-insensitively; paths and keys are case-sensitive.
 * - `locationKey` renders a location canonically with a trailing slash, so "lies within" is plain
 *   string prefixing: `within(key, prefixKey)` is `key.startsWith(prefixKey)`, in JavaScript and in
 *   SQL (`substr(key, 1, length(prefix)) = prefix`) alike.
 * - An endpoint (a catalog or metastore) is compared by origin: `endpointKey` lower-cases scheme
 *   and host and fills in the default port.
 */

/** A location reduced to what comparisons use. */
export interface Location {
  scheme: string;
  /** The bucket (Azure: `account/container`) of an object store; empty for `file`. */
  root: string;
  /** Path segments (`file`, dot segments resolved and percent-decoded) or key segments. */
  segments: string[];
}

export class LocationError extends Error {
  override readonly name = "LocationError";
}

/** Schemes whose root is an S3-style bucket name. */
const BUCKET_SCHEMES = new Set(["s3", "s3a", "s3n"]);
/** Spellings of a store that has one canonical scheme. */
const CANONICAL_SCHEME: Record<string, string> = { gcs: "gs", abfs: "azure", abfss: "azure" };
/** Google Cloud Storage bucket names: 3-63 characters, up to 222 when dotted; `_` allowed. */
const GCS_BUCKET = /^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$/;
const AZURE_ACCOUNT = /^[a-z0-9]{3,24}$/;
/** Azure container names: 3-63 lower-case letters, digits and single hyphens between them. */
const AZURE_CONTAINER = /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/;
/** Hadoop's ABFS authority: `container@account.dfs.core.windows.net`. */
const ABFS_AUTHORITY = /^([^@/]*)@([^@/.]*)\.dfs\.core\.windows\.net$/;
/** Azure spellings not read: `az://container/...` names no account, `wasb[s]://` is the retired driver's. */
const REFUSED_AZURE = new Set(["az", "wasb", "wasbs"]);

/**
 * Parses a storage URI; throws `LocationError` with the reason.
 *
 * @example parseLocation("file:///data/a/../b") // { scheme: "file", root: "", segments: ["data", "b"] }
 * @example parseLocation("s3://Lake/raw/") // { scheme: "s3", root: "lake", segments: ["raw"] }
 * @example parseLocation("abfss://raw@acct.dfs.core.windows.net/x") // { scheme: "azure", root: "acct/raw", segments: ["x"] }
 */
export function parseLocation(uri: string): Location {
  if (uri.includes("\0")) throw new LocationError("contains a NUL character");
  if (uri.startsWith("/")) return parseFilePath(uri, uri);
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s.exec(uri);
  if (!match) throw new LocationError("is not a URI (scheme://...) or an absolute path");
  const scheme = (match[1] as string).toLowerCase();
  const rest = match[2] as string;
  if (scheme === "file") return parseFile(rest, uri);
  return parseObjectStore(scheme, rest);
}

function parseFile(rest: string, uri: string): Location {
  const slash = rest.indexOf("/");
  const host = slash < 0 ? rest : rest.slice(0, slash);
  if (host !== "" && host.toLowerCase() !== "localhost")
    throw new LocationError(`names the host '${host}'; file:// locations must be local`);
  if (/[?#]/.test(rest)) throw new LocationError("has a query or fragment");
  const path = slash < 0 ? "/" : rest.slice(slash);
  const segments = path.split("/").map((s) => {
    try {
      return decodeURIComponent(s);
    } catch {
      throw new LocationError(`has a bad percent-escape in '${s}'`);
    }
  });
  if (segments.some((s) => s.includes("/") || s.includes("\0")))
    throw new LocationError("has an encoded '/' or NUL in a path segment");
  return parseFilePath(segments.join("/"), uri);
}

function parseFilePath(path: string, uri: string): Location {
  if (path.includes("\\")) throw new LocationError("has a backslash, which is ambiguous in a path");
  if (!path.startsWith("/")) throw new LocationError(`'${uri}' is not an absolute path`);
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  return { scheme: "file", root: "", segments };
}

function parseObjectStore(spelling: string, rest: string): Location {
  if (REFUSED_AZURE.has(spelling))
    throw new LocationError(
      `uses ${spelling}://, which is not read; name Azure locations as azure://<account>/<container>/<path>`,
    );
  const scheme = CANONICAL_SCHEME[spelling] ?? spelling;
  const slash = rest.indexOf("/");
  const authority = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  let root = authority;
  let key = slash < 0 ? "" : rest.slice(slash + 1);
  if (scheme === "azure") {
    const azure = parseAzureRoot(spelling, authority, key);
    root = `${azure.account}/${azure.container}`;
    key = azure.key;
  } else if (scheme === "gs") {
    if (!GCS_BUCKET.test(root) || (root.length > 63 && !root.includes(".")))
      throw new LocationError(`has an invalid bucket name '${root}'`);
  } else {
    if (BUCKET_SCHEMES.has(scheme) && !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(root))
      throw new LocationError(`has an invalid bucket name '${root}'`);
    if (!/^[a-z0-9][a-z0-9.@_:-]{0,254}$/.test(root))
      throw new LocationError(`has an invalid root '${root}'`);
  }
  const segments = key.split("/");
  // A trailing slash names the same prefix as none: "raw/" and "raw" both mean the folder raw.
  if (segments.at(-1) === "") segments.pop();
  if (segments.some((s) => s === "." || s === ".."))
    throw new LocationError("has a '.' or '..' segment in the object key");
  return { scheme, root, segments };
}

/**
 * The account, container and key of an Azure URI: `azure://<account>/<container>/<key>`, or
 * Hadoop's `abfs[s]://<container>@<account>.dfs.core.windows.net/<key>`.
 */
function parseAzureRoot(
  spelling: string,
  authority: string,
  rest: string,
): { account: string; container: string; key: string } {
  let account = authority;
  let container: string;
  let key: string;
  if (spelling === "azure") {
    const slash = rest.indexOf("/");
    container = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
    key = slash < 0 ? "" : rest.slice(slash + 1);
  } else {
    const abfs = ABFS_AUTHORITY.exec(authority);
    if (!abfs)
      throw new LocationError(
        `must name '<container>@<account>.dfs.core.windows.net' after ${spelling}:// (or use azure://<account>/<container>/...)`,
      );
    container = abfs[1] as string;
    account = abfs[2] as string;
    key = rest;
  }
  if (!AZURE_ACCOUNT.test(account))
    throw new LocationError(`has an invalid storage account name '${account}'`);
  if (!AZURE_CONTAINER.test(container))
    throw new LocationError(`has an invalid container name '${container}'`);
  return { account, container, key };
}

/** Whether `location` is `prefix` itself or lies below it. */
export function isWithin(location: Location, prefix: Location): boolean {
  if (location.scheme !== prefix.scheme || location.root !== prefix.root) return false;
  if (location.segments.length < prefix.segments.length) return false;
  return prefix.segments.every((segment, i) => location.segments[i] === segment);
}

/** Renders a location back as a canonical URI, for logs and error messages. */
export function formatLocation(location: Location): string {
  const path = location.segments.join("/");
  return location.scheme === "file" ? `file:///${path}` : `${location.scheme}://${location.root}/${path}`;
}

/**
 * The canonical key of a location: its canonical URI with a trailing slash. A location lies within
 * a prefix exactly when its key starts with the prefix's key. Throws `LocationError`.
 *
 * @example locationKey("s3://Lake/raw") // "s3://lake/raw/"
 * @example locationKey("file:///data/./a/") // "file:///data/a/"
 * @example locationKey("abfss://raw@acct.dfs.core.windows.net/x") // "azure://acct/raw/x/"
 */
export function locationKey(uri: string): string {
  const location = parseLocation(uri);
  const path = location.segments.map((s) => `${s}/`).join("");
  return `${location.scheme}://${location.root}/${path}`;
}

/** The location key, or undefined for a URI that can't be read with certainty. */
export function tryLocationKey(uri: string): string | undefined {
  try {
    return locationKey(uri);
  } catch (err) {
    if (err instanceof LocationError) return undefined;
    throw err;
  }
}

/** Whether the location with key `key` lies within the prefix with key `prefixKey`. */
export function within(key: string, prefixKey: string): boolean {
  return key.startsWith(prefixKey);
}

/** What a location key reads as in messages: the canonical URI without the trailing slash. */
export function describeKey(key: string): string {
  return key.endsWith("/") && !key.endsWith(":///") ? key.slice(0, -1) : key;
}

const DEFAULT_PORTS: Record<string, string> = { http: "80", https: "443", thrift: "9083" };

/**
 * The canonical key of a catalog or metastore endpoint: `scheme://host:port`, lower-cased, with the
 * scheme's default port filled in; the path is ignored (an endpoint is a server). Throws
 * `LocationError` for anything that is not such a URL.
 *
 * @example endpointKey("https://Dbc-1.cloud.databricks.com/api/2.1") // "https://dbc-1.cloud.databricks.com:443"
 * @example endpointKey("thrift://metastore:9083") // "thrift://metastore:9083"
 */
export function endpointKey(url: string): string {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/([^/?#]+)/.exec(url);
  if (!match) throw new LocationError(`endpoint '${url}' is not a URL (scheme://host[:port])`);
  const scheme = (match[1] as string).toLowerCase();
  const authority = (match[2] as string).toLowerCase();
  if (authority.includes("@")) throw new LocationError(`endpoint '${url}' must not carry credentials`);
  const hostPort = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(authority);
  if (!hostPort) throw new LocationError(`endpoint '${url}' has an invalid host`);
  const port = hostPort[2] ?? DEFAULT_PORTS[scheme];
  if (port === undefined) throw new LocationError(`endpoint '${url}' needs a port`);
  return `${scheme}://${hostPort[1]}:${Number(port)}`;
}

/** The endpoint key, or undefined for something that is not an endpoint URL. */
export function tryEndpointKey(url: string): string | undefined {
  try {
    return endpointKey(url);
  } catch (err) {
    if (err instanceof LocationError) return undefined;
    throw err;
  }
}
