/**
 * Which npm packages the appliance image installs, read from package-lock.json with npm's own
 * rule for `npm ci --workspace <ws> --include-workspace-root --omit=dev` (Arborist's reify in
 * npm 10, the npm of the image's Node 20):
 *
 * - Start from the workspace and from every dependency of the root (devDependencies included).
 * - Follow every edge, through dev packages too: dependencies, optionalDependencies,
 *   peerDependencies, and for the root and the workspace also devDependencies; resolve names as
 *   Node does, up the node_modules chain.
 * - Drop what `--omit=dev` drops: entries the lockfile flags `dev`. The flag is computed over the
 *   whole monorepo, so a package this workspace reaches only through dev tools still arrives when
 *   another workspace uses it in production, and is listed.
 * - Drop optional entries whose os, cpu or libc do not match the image (linux, x64, glibc), with
 *   the dependencies nothing else needs (Arborist's optionalSet).
 *
 * The lockfile, not node_modules, decides, so the list is the image's on any machine. The rule was
 * checked against real `npm ci` runs (npm 10.8.2, with and without --omit=dev): same packages.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The install in screen-appliance/Dockerfile; the notice lists exactly what it puts in the image. */
export const IMAGE_INSTALL = {
  command: "npm ci --omit=dev --workspace screen-appliance --include-workspace-root",
  workspace: "screen-appliance",
  omitDev: true,
  platform: { os: "linux", cpu: "x64", libc: "glibc" },
} as const;

export interface LockEntry {
  name?: string;
  version?: string;
  license?: string;
  link?: boolean;
  resolved?: string;
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  os?: string[];
  cpu?: string[];
  libc?: string[];
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export interface Lockfile {
  packages: Record<string, LockEntry>;
}

export interface Platform {
  os: string;
  cpu: string;
  libc: string;
}

export interface ShippedPackage {
  name: string;
  version: string;
  /** The license the lockfile records from the package's manifest, if any. */
  license: string | undefined;
  /** Location relative to the repository root (also where it lands under /app in the image). */
  location: string;
}

export function readLockfile(repoRoot: string): Lockfile {
  return JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as Lockfile;
}

/** Packages `IMAGE_INSTALL` puts in node_modules, sorted by name then location; links excluded. */
export function shippedPackages(
  lock: Lockfile,
  install: { workspace: string; omitDev: boolean; platform: Platform } = IMAGE_INSTALL,
): ShippedPackage[] {
  const { packages } = lock;
  if (!packages[""]) throw new Error("package-lock.json has no root entry; is it a lockfile v2 or v3?");
  if (!packages[install.workspace]) {
    throw new Error(`package-lock.json has no workspace "${install.workspace}"; run npm install`);
  }
  const graph = dependencyGraph(packages);
  const starts = [install.workspace, ...(graph.out.get("") ?? []).map((edge) => edge.to)];
  const reached = closure(starts, (location) => (graph.out.get(location) ?? []).map((edge) => edge.to));
  const failed = [...reached].filter((location) => !fitsPlatform(packages, location, install.platform));
  const skipped = new Set(failed.flatMap((location) => [...optionalSet(graph, location)]));
  return [...reached]
    .filter((location) => location.includes("node_modules/") && !skipped.has(location))
    .filter((location) => !(install.omitDev && packages[location]?.dev))
    .map((location) => {
      const entry = packages[location] as LockEntry;
      return {
        name: entry.name ?? location.slice(location.lastIndexOf("node_modules/") + "node_modules/".length),
        version: entry.version ?? "",
        license: entry.license,
        location,
      };
    })
    .sort((a, b) => compare(a.name, b.name) || compare(a.location, b.location));
}

interface Edge {
  from: string;
  to: string;
  optional: boolean;
}

interface Graph {
  out: Map<string, Edge[]>;
  in: Map<string, Edge[]>;
}

/** Every dependency edge in the lockfile, links replaced by their targets. */
function dependencyGraph(packages: Record<string, LockEntry>): Graph {
  const graph: Graph = { out: new Map(), in: new Map() };
  for (const [from, entry] of Object.entries(packages)) {
    if (entry.link) continue;
    const project = !from.includes("node_modules/");
    const optional = new Set(Object.keys(entry.optionalDependencies ?? {}));
    const names = new Set([
      ...Object.keys(entry.dependencies ?? {}),
      ...optional,
      ...Object.keys(entry.peerDependencies ?? {}),
      ...(project ? Object.keys(entry.devDependencies ?? {}) : []),
    ]);
    const edges: Edge[] = [];
    for (const name of names) {
      const to = resolve(packages, from, name);
      if (to === undefined) continue;
      const edge = { from, to, optional: optional.has(name) };
      edges.push(edge);
      graph.in.set(to, [...(graph.in.get(to) ?? []), edge]);
    }
    graph.out.set(from, edges);
  }
  return graph;
}

function closure(starts: string[], next: (location: string) => string[]): Set<string> {
  const reached = new Set<string>();
  const pending = [...starts];
  for (let location = pending.pop(); location !== undefined; location = pending.pop()) {
    if (reached.has(location)) continue;
    reached.add(location);
    pending.push(...next(location));
  }
  return reached;
}

/**
 * What npm drops with an optional package it cannot install (Arborist's optionalSet): the
 * package, its dependants up to the first optional edge, and their dependencies that nothing
 * outside that set needs. A dependency that something else needs stays, even if only this
 * package led the install to it.
 */
function optionalSet(graph: Graph, failed: string): Set<string> {
  const boundary = new Set([failed]);
  for (const location of boundary) {
    for (const edge of graph.in.get(location) ?? []) if (!edge.optional) boundary.add(edge.from);
  }
  const inside = (edge: Edge) => !boundary.has(edge.to);
  const set = closure([...boundary], (location) =>
    (graph.out.get(location) ?? []).filter(inside).map((edge) => edge.to),
  );
  for (let changed = true; changed; ) {
    changed = false;
    for (const location of set) {
      if ((graph.in.get(location) ?? []).some((edge) => !set.has(edge.from) && inside(edge))) {
        set.delete(location);
        changed = true;
      }
    }
  }
  return set;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Node's lookup: `<from>/node_modules/<name>`, then the same from each enclosing package up to the root. */
function resolve(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  for (let base: string | undefined = from; base !== undefined; base = parentOf(base)) {
    const location = base ? `${base}/node_modules/${name}` : `node_modules/${name}`;
    const entry = packages[location];
    if (entry) return entry.link && entry.resolved !== undefined ? entry.resolved : location;
  }
  return undefined;
}

function parentOf(location: string): string | undefined {
  if (location === "") return undefined;
  const nested = location.lastIndexOf("/node_modules/");
  return nested >= 0 ? location.slice(0, nested) : "";
}

/** npm skips an optional package built for another platform; a required one fails `npm ci`. */
function fitsPlatform(packages: Record<string, LockEntry>, location: string, platform: Platform): boolean {
  const entry = packages[location] as LockEntry;
  const fits =
    matches(platform.os, entry.os) && matches(platform.cpu, entry.cpu) && matches(platform.libc, entry.libc);
  if (fits || entry.optional || entry.devOptional || entry.dev) return fits;
  throw new Error(
    `${location} is required but built for os ${entry.os ?? "any"}, cpu ${entry.cpu ?? "any"}, libc ${entry.libc ?? "any"}; npm ci would fail in the image`,
  );
}

/** npm's os/cpu/libc rule: "!x" excludes x; any plain value means "only these". */
function matches(value: string, allowed: string[] | undefined): boolean {
  if (!allowed || allowed.length === 0) return true;
  if (allowed.includes(`!${value}`)) return false;
  const positive = allowed.filter((a) => !a.startsWith("!"));
  return positive.length === 0 || positive.includes(value);
}
