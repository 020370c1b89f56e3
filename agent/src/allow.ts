/**
 * The allow list: the storage locations this agent may touch, whatever the control plane asks.
 * Every job names the URIs it would touch before it runs, and each must fall under one allowed
 * prefix, compared segment by segment after normalisation, so `file:///data/a` allows
 * `file:///data/a/x` but neither `file:///data/ab` nor `file:///data/a/../b`.
 *
 * Anything the check can't read with certainty is refused rather than guessed at: unknown schemes,
 * `file://` URIs on another host or with `?`, `#`, a backslash or a NUL, and object keys with `.` or
 * `..` segments (S3 keeps them literally, other tools collapse them, so their meaning depends on
 * the reader).
 *
 * Case rules: the scheme and an S3 bucket are compared case-insensitively (bucket names are
 * lower-case); paths and object keys are case-sensitive.
 */

/** Storage schemes the allow list understands. */
export const SCHEMES = ["file", "s3"] as const;
export type Scheme = (typeof SCHEMES)[number];

/** A location reduced to what the allow list compares. */
export interface Location {
  scheme: Scheme;
  /** The bucket for `s3`; empty for `file`. */
  root: string;
  /** Path segments (`file`, dot segments resolved and percent-decoded) or key segments (`s3`). */
  segments: string[];
}

export class LocationError extends Error {
  override readonly name = "LocationError";
}

/**
 * Parses a storage URI into a comparable location; throws `LocationError` with the reason.
 *
 * @example parseLocation("file:///data/a/../b") // { scheme: "file", root: "", segments: ["data", "b"] }
 * @example parseLocation("s3://Lake/raw/") // { scheme: "s3", root: "lake", segments: ["raw"] }
 */
export function parseLocation(uri: string): Location {
  if (uri.includes("\0")) throw new LocationError("contains a NUL character");
  if (uri.startsWith("/")) return parseFilePath(uri, uri);
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\/(.*)$/s.exec(uri);
  if (!match) throw new LocationError("is not a URI (scheme://...) or an absolute path");
  const scheme = (match[1] as string).toLowerCase();
  const rest = match[2] as string;
  if (scheme === "file") return parseFile(rest, uri);
  if (scheme === "s3") return parseBucket("s3", rest);
  throw new LocationError(`uses the scheme '${scheme}', which this agent does not support`);
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
  const segments: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") segments.pop();
    else segments.push(segment);
  }
  if (!path.startsWith("/")) throw new LocationError(`'${uri}' is not an absolute path`);
  return { scheme: "file", root: "", segments };
}

function parseBucket(scheme: Scheme, rest: string): Location {
  const slash = rest.indexOf("/");
  const bucket = (slash < 0 ? rest : rest.slice(0, slash)).toLowerCase();
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new LocationError(`has an invalid bucket name '${bucket}'`);
  const key = slash < 0 ? "" : rest.slice(slash + 1);
  const segments = key.split("/");
  // A trailing slash names the same prefix as none: "raw/" and "raw" both mean the folder raw.
  if (segments.at(-1) === "") segments.pop();
  if (segments.some((s) => s === "." || s === ".."))
    throw new LocationError("has a '.' or '..' segment in the object key");
  return { scheme, root: bucket, segments };
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

export type AllowVerdict = { ok: true } | { ok: false; reason: string };

/**
 * The configured prefixes, parsed once. An empty list allows nothing: jobs that name no location
 * (diagnostics) still run.
 *
 * @example new AllowList(["file:///data/lake"]).check("file:///data/lake/t1") // { ok: true }
 */
export class AllowList {
  readonly prefixes: readonly Location[];

  /** Throws `LocationError` naming the first prefix that is not a valid location. */
  constructor(prefixes: readonly string[]) {
    this.prefixes = prefixes.map((prefix) => {
      try {
        return parseLocation(prefix);
      } catch (err) {
        throw new LocationError(`allow prefix '${prefix}' ${(err as Error).message}`);
      }
    });
  }

  /** The schemes the list allows at least one prefix of (announced as capabilities). */
  schemes(): Scheme[] {
    return SCHEMES.filter((s) => this.prefixes.some((p) => p.scheme === s));
  }

  /** Checks one URI. The reason names the URI and what to change. */
  check(uri: string): AllowVerdict {
    let location: Location;
    try {
      location = parseLocation(uri);
    } catch (err) {
      return { ok: false, reason: `location '${uri}' ${(err as Error).message}` };
    }
    if (this.prefixes.some((prefix) => isWithin(location, prefix))) return { ok: true };
    const allowed = this.prefixes.map(formatLocation);
    return {
      ok: false,
      reason:
        `location '${uri}' is outside this agent's allow list ` +
        `(${allowed.length ? allowed.join(", ") : "empty"}); add a prefix with --allow to permit it`,
    };
  }

  /** Checks every URI; the first refusal wins. */
  checkAll(uris: readonly string[]): AllowVerdict {
    for (const uri of uris) {
      const verdict = this.check(uri);
      if (!verdict.ok) return verdict;
    }
    return { ok: true };
  }
}

/** Payload keys whose string values are storage locations, wherever they appear. */
const LOCATION_KEY = /^(uri|uris|location|locations)$|_(uri|uris|location|locations)$/;
/** Any string that starts like a storage URI is a location too, whatever its key. */
const STORAGE_URI = /^(file|s3|s3a|s3n|gs|gcs|abfs|abfss|az|azure|wasb|wasbs|hdfs):\/\//i;

/**
 * Every storage location a payload names: the values of location keys (`uri`, `table_uri`,
 * `locations`, ...) and any string that looks like a storage URI, at any depth. The runner checks
 * these besides what a handler declares, so a field a handler forgot to declare is still checked.
 *
 * @example locationsIn({ uri: "s3://b/t", inputs: [{ source_uri: "file:///x" }] }) // ["s3://b/t", "file:///x"]
 */
export function locationsIn(payload: unknown): string[] {
  const found = new Set<string>();
  const visit = (value: unknown, locationKey: boolean, depth: number): void => {
    if (depth > 32) return;
    if (typeof value === "string") {
      if (locationKey || STORAGE_URI.test(value)) found.add(value);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, locationKey, depth + 1);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, LOCATION_KEY.test(key), depth + 1);
    }
  };
  visit(payload, false, 0);
  return [...found];
}
