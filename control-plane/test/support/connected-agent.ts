/**
 * An agent the control plane counts as connected, for suites that drive jobs through the job service
 * instead of a socket: its row says connected with what it announced, as the hub writes it on hello.
 * A validate needs one (it answers 503 while no connected agent may run it).
 */
import type { Hello } from "@lakesmith/shared/protocol";
import type { TestPlane } from "../harness.ts";

export interface ConnectedAgent {
  id: string;
  /** A sign of life now: the plane counts an agent unseen for three heartbeats as gone. */
  seen(): Promise<void>;
}

export async function connectedAgent(
  plane: TestPlane,
  announced: Partial<Pick<Hello, "kinds" | "capabilities" | "allow" | "endpoints" | "draining">> & {
    name?: string;
  } = {},
): Promise<ConnectedAgent> {
  const { agents, clock } = plane.services;
  const { agent } = await agents.create(announced.name ?? "connected-test-agent", null);
  const hello: Hello = {
    type: "hello",
    protocol: 1,
    agent_version: "test",
    kinds: announced.kinds ?? ["onboarding", "crunch", "vacuum", "partition_expiration"],
    capabilities: announced.capabilities ?? ["s3", "gs", "file"],
    allow: announced.allow ?? ["s3://lake/", "s3://other/", "gs://other-lake/", "file:///"],
    endpoints: announced.endpoints ?? [],
    capacity: 2,
    leases: [],
    draining: announced.draining ?? false,
  };
  await agents.connected(agent.id, hello, clock.now());
  return { id: agent.id, seen: () => agents.seen([agent.id]) };
}
