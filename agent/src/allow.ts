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
 *
 * Each store has one scheme, whatever the spelling of its URIs: `gs` (also `gcs://`) and `azure`
 * (also Hadoop's `abfs[s]://container@account.dfs.core.windows.net/`), so an allowed prefix covers
 * every spelling of the places below it and the agent announces one capability per store.
 */

import {
  endpointKey,
  formatLocation,
  isWithin,
  type Location,
  LocationError,
  parseLocation as parseAnyLocation,
} from "@lakesmith/shared/locations";

export { formatLocation, isWithin, type Location, LocationError };

/** Storage schemes the allow list understands. */
export const SCHEMES = ["file", "s3", "gs", "azure"] as const;
export type Scheme = (typeof SCHEMES)[number];

/**
 * Parses a storage URI this agent can read into a comparable location (the shared rules of
 * `@lakesmith/shared/locations`); throws `LocationError` with the reason, also for a scheme the
 * agent has no store for.
 *
 * @example parseLocation("file:///data/a/../b") // { scheme: "file", root: "", segments: ["data", "b"] }
 * @example parseLocation("s3://Lake/raw/") // { scheme: "s3", root: "lake", segments: ["raw"] }
 */
export function parseLocation(uri: string): Location {
  const location = parseAnyLocation(uri);
  if (!(SCHEMES as readonly string[]).includes(location.scheme))
    throw new LocationError(`uses the scheme '${location.scheme}', which this agent does not support`);
  return location;
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
  /** Endpoint keys (`endpointKey`) of the catalogs and metastores the agent may reach. */
  readonly endpoints: readonly string[];

  /** Throws `LocationError` naming the first prefix or endpoint that is not valid. */
  constructor(prefixes: readonly string[], endpoints: readonly string[] = []) {
    this.prefixes = prefixes.map((prefix) => {
      try {
        return parseLocation(prefix);
      } catch (err) {
        throw new LocationError(`allow prefix '${prefix}' ${(err as Error).message}`);
      }
    });
    this.endpoints = endpoints.map((endpoint) => endpointKey(endpoint));
  }

  /** What the agent announces in `hello`: its prefixes as canonical URIs, and its endpoints. */
  announced(): { allow: string[]; endpoints: string[] } {
    return { allow: this.prefixes.map(formatLocation), endpoints: [...this.endpoints] };
  }

  /** Checks one catalog or metastore endpoint. */
  checkEndpoint(url: string): AllowVerdict {
    let key: string;
    try {
      key = endpointKey(url);
    } catch (err) {
      return { ok: false, reason: (err as Error).message };
    }
    if (this.endpoints.includes(key)) return { ok: true };
    return {
      ok: false,
      reason:
        `endpoint '${url}' is not one this agent may reach ` +
        `(${this.endpoints.length ? this.endpoints.join(", ") : "none"}); add it with --allow-endpoints or LAKESMITH_AGENT_ALLOW_ENDPOINTS (comma-separated) to permit it`,
    };
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
        `(${allowed.length ? allowed.join(", ") : "empty"}); add a prefix with --allow or LAKESMITH_AGENT_ALLOW (comma-separated; the local agent of 'npm start' takes it too) to permit it`,
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
/** Addresses of catalogs and metastores: endpoints, never storage. */
const ENDPOINT_URI = /^(https?|thrift):\/\//i;

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
      // A catalog's or metastore's address under a location key (`metastore_uri`) is an endpoint,
      // checked against the allowed endpoints a handler declares, not a storage location.
      if ((locationKey && !ENDPOINT_URI.test(value)) || STORAGE_URI.test(value)) found.add(value);
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item, locationKey, depth + 1);
    } else if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) visit(item, LOCATION_KEY.test(key), depth + 1);
    }
  };
  visit(payload, false, 0);
  return [...found];
}
