/**
 * Object maintenance on the other clouds' stores, through the public API and a `lakesmith-agent`
 * child process: a use-as-registered location on `azure://` (Azurite, Microsoft's emulator) and one
 * on `gs://` (GCS's XML API, which the agent speaks with HMAC keys, served by the loopback S3
 * server), each prefix's policy converting its JSON to a target prefix on the same store, read back
 * through the store and DuckDB. The `file://` and `s3://` paths are in `prefix-conversion-e2e`.
 */
import { mkdtempSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine, sqlList } from "../agent/src/engine/duckdb.ts";
import { type ObjectStore, storeFor } from "../agent/src/store/index.ts";
import { AZURITE_ACCOUNT, AZURITE_KEY, type Azurite, startAzurite } from "../agent/test/support/azurite.ts";
import { type LocalS3, S3RVER_CREDENTIALS, startS3rver } from "../agent/test/support/local-s3.ts";
import type { ChildAgent } from "./support/agents.ts";
import { connectedChildAgent, startPlane, type TestPlane } from "./support/plane.ts";

const BASE = "/api/v1/object-maintenance";
const scratch = mkdtempSync(join(tmpdir(), "object-stores-e2e-"));
const HMAC = { accessId: S3RVER_CREDENTIALS.accessKeyId, secret: S3RVER_CREDENTIALS.secretAccessKey };
let plane: TestPlane;
let azurite: Azurite;
let gcs: LocalS3;
const children: ChildAgent[] = [];

beforeAll(async () => {
  [azurite, gcs, plane] = await Promise.all([startAzurite(), startS3rver(), startPlane()]);
  await connectedChildAgent(
    plane,
    "clouds-agent",
    {
      LAKESMITH_AGENT_ALLOW: `azure://${AZURITE_ACCOUNT}/lake,gs://lake`,
      LAKESMITH_AGENT_SCRATCH: join(scratch, "agent"),
      LAKESMITH_AGENT_AZURE_ENDPOINT: azurite.endpoint,
      LAKESMITH_AGENT_AZURE_ACCOUNT_KEY: AZURITE_KEY,
      LAKESMITH_AGENT_GCS_ENDPOINT: gcs.endpoint,
      LAKESMITH_AGENT_GCS_HMAC_ACCESS_ID: HMAC.accessId,
      LAKESMITH_AGENT_GCS_HMAC_SECRET: HMAC.secret,
    },
    children,
  );
}, 60_000);

afterAll(async () => {
  for (const c of children.splice(0)) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await plane?.stop();
  await azurite?.close();
  await gcs?.close();
  await rm(scratch, { recursive: true, force: true });
});

const ndjson = (rows: object[]) => `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`;

/** The stores as the test writes and reads them (the agent has its own, from its environment). */
const stores = {
  azure: (path: string) =>
    storeFor(`azure://${AZURITE_ACCOUNT}/lake/${path}`, {
      azure: { endpoint: azurite.endpoint, accountKey: AZURITE_KEY },
    }),
  gs: (path: string) => storeFor(`gs://lake/${path}`, { gcs: { endpoint: gcs.endpoint, hmac: HMAC } }),
};

async function keys(store: ObjectStore): Promise<string[]> {
  const found: string[] = [];
  for await (const object of store.list()) found.push(object.key);
  return found.sort();
}

describe.each([
  ["azure", `azure://${AZURITE_ACCOUNT}/lake`],
  ["gs", "gs://lake"],
] as const)("a JSON prefix on %s:// converted through the API", (scheme, bucket) => {
  it("registers the location, converts the prefix by an action, lists the run and writes Parquet that reads back equal", async () => {
    const source = stores[scheme]("raw/events/");
    await source.write(
      "a.jsonl",
      Buffer.from(
        ndjson([
          { id: 1, kind: "click" },
          { id: 2, kind: "view", amount: 2.5 },
        ]),
      ),
    );
    await source.write("b.json", Buffer.from(JSON.stringify([{ id: 3, kind: "buy", amount: 9.5 }])));

    const location = await plane.api("POST", `${BASE}/locations`, {
      name: `events-${scheme}`,
      uri: `${bucket}/raw/events`,
      skip_age_days: 0,
    });
    expect(location.status, JSON.stringify(location.body)).toBe(201);
    expect(location.body).toMatchObject({ status: "Active", prefixes: 1 });
    const [prefix] = (await plane.api("GET", `${BASE}/locations/${location.body.id}/managed-prefixes`)).body
      .items;
    expect(prefix.uri).toBe(`${bucket}/raw/events`);
    const policy = await plane.api("PUT", `${BASE}/prefixes/${prefix.id}/policy`, {
      convert: { target_prefix: `${bucket}/curated/events`, target_file_size_mb: 8 },
    });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);

    const posted = await plane.api("POST", `${BASE}/prefixes/${prefix.id}/actions`, { action: "convert" });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    const job = await plane.waitForJob(posted.body.job_id, ["succeeded", "failed"], 60_000);
    expect(job.status, JSON.stringify(job.error)).toBe("succeeded");
    const [run] = (await plane.api("GET", `${BASE}/prefixes/${prefix.id}/runs`)).body.items;
    expect(run).toMatchObject({ job_id: posted.body.job_id, action: "convert", status: "succeeded" });
    expect(run.metrics).toMatchObject({ files_in: 2, rows: 3 });

    const target = stores[scheme]("curated/events/");
    const written = await keys(target);
    expect(written).toContain("_lakesmith_manifest.json");
    const parquet = written.filter((k) => k.endsWith(".parquet"));
    expect(parquet.length).toBeGreaterThan(0);
    const local = await Promise.all(
      parquet.map(async (key, i) => {
        const path = join(scratch, `${scheme}-${i}.parquet`);
        await target.download(key, path);
        return path;
      }),
    );
    const engine = await Engine.open({ memoryLimitMb: 128 });
    try {
      const rows = await engine.query<{ id: string; kind: string; amount: number | null }>(
        `select id, kind, amount from read_parquet(${sqlList(local)}) order by id`,
      );
      expect(rows.map((r) => [String(r.id), r.kind, r.amount])).toEqual([
        ["1", "click", null],
        ["2", "view", 2.5],
        ["3", "buy", 9.5],
      ]);
    } finally {
      engine.close();
    }
    // The inputs are where they were: only the policy's removal action proposes them for deletion.
    expect(await keys(source)).toEqual(["a.jsonl", "b.json"]);
  }, 90_000);
});
