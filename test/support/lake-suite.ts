/**
 * What a suite over a local lake needs: a control plane, the loopback S3 server (bucket `lake`) and
 * one `lakesmith-agent` child allowed `file://<root>` and `s3://lake` with the server's settings;
 * `stop` ends them all and removes `root`.
 *
 * @example const suite = await startLakeSuite(root, "discovery-agent");
 */
import { rm } from "node:fs/promises";
import { type LocalS3, S3RVER_CREDENTIALS, startS3rver } from "../../agent/test/support/local-s3.ts";
import type { ChildAgent } from "./agents.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./plane.ts";

export interface LakeSuite {
  plane: TestPlane;
  s3: LocalS3;
  stop(): Promise<void>;
}

export async function startLakeSuite(root: string, agentName: string): Promise<LakeSuite> {
  const children: ChildAgent[] = [];
  const s3 = await startS3rver();
  const plane = await startPlane();
  await connectedChildAgent(
    plane,
    agentName,
    {
      LAKESMITH_AGENT_ALLOW: `file://${root},s3://lake`,
      LAKESMITH_AGENT_S3_ENDPOINT: s3.endpoint,
      LAKESMITH_AGENT_S3_FORCE_PATH_STYLE: "true",
      LAKESMITH_AGENT_S3_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
    children,
  );
  return {
    plane,
    s3,
    async stop() {
      for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
      await plane.stop();
      await s3.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
