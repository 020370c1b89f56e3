/**
 * What agents may use, as the job engine compares it: allow-list prefixes as location keys and
 * endpoints as endpoint keys (`@lakesmith/shared/locations`). Offers match jobs against these in
 * SQL (`jobs/offer.ts`); job views explain with them why a queued job waits (`jobs/view.ts`).
 */
import { describeKey, tryEndpointKey, tryLocationKey, within } from "@lakesmith/shared/locations";
import type { Hello } from "@lakesmith/shared/protocol";

/**
 * What an agent announced it may use, as keys offers compare: its allow list's location keys and
 * its endpoint keys. An entry that is no location or endpoint allows nothing (the agent's own
 * configuration check refuses such entries, so only a foreign agent sends one).
 */
export function routingKeys(hello: Pick<Hello, "allow" | "endpoints">): {
  allow: string[];
  endpoints: string[];
} {
  const keys = (values: string[], key: (v: string) => string | undefined) =>
    [...new Set(values.map(key).filter((k): k is string => k !== undefined))].sort();
  return { allow: keys(hello.allow, tryLocationKey), endpoints: keys(hello.endpoints, tryEndpointKey) };
}

/** What a connected agent can do and may use. */
export interface AgentAbility {
  id: string;
  name: string;
  kinds: string[];
  capabilities: string[];
  /** Location keys of its allow list. */
  allow: string[];
  /** Endpoint keys it may reach. */
  endpoints: string[];
}

export type Abilities = AgentAbility[];

/** The job's locations the agent's allow list does not cover, as URIs for messages. */
export function locationsOutside(locations: readonly string[], allow: readonly string[]): string[] {
  return locations.filter((key) => !allow.some((prefix) => within(key, prefix))).map(describeKey);
}

/** The job's endpoints the agent may not reach. */
export function endpointsOutside(endpoints: readonly string[], allowed: readonly string[]): string[] {
  return endpoints.filter((e) => !allowed.includes(e));
}

/** What a job needs of the agent that runs it, as its kind's declaration derives it (`routingOf`). */
export interface JobRouting {
  kind: string;
  requires: readonly string[];
  locations: readonly string[];
  endpoints: readonly string[];
}

/**
 * Whether the agent may be offered the job: it announced the kind and every capability the job
 * requires, its allow list covers every location, and it may reach every endpoint (the checks
 * `jobs/offer.ts` makes, less the refusals and the free slot that only an offer can know).
 */
export function mayRun(agent: AgentAbility, job: JobRouting): boolean {
  return (
    agent.kinds.includes(job.kind) &&
    job.requires.every((c) => agent.capabilities.includes(c)) &&
    locationsOutside(job.locations, agent.allow).length === 0 &&
    endpointsOutside(job.endpoints, agent.endpoints).length === 0
  );
}
