// A Hive table through the Worker build on D1, with an agent on a real WebSocket: a
// hive_metastore connection synced, its Parquet table onboarded as hive, a crunch whose result
// supersedes two folders (the crunch finish hook's nested json_each inside a D1 batch), the
// records listed, and one recovered: the recover job carries the metastore reference (with its
// password) for the agent, and every record of the folder moves with it.
import { describe, expect, it } from "vitest";
import { answeringAgent, ended, type Json, json, type PartedAnswer } from "./support/client.ts";

const PASSWORD = "workerd-hms-pa55-0c2e";
const METASTORE = "thrift://hms.workerd.test:9083";
const RECIPE = {
  partition_columns: ["dt"],
  partition_pattern: "dt=YYYY-MM-DD",
  date_filter_column: "dt",
  cluster_columns: [],
  enumerated_columns: [],
};

const folder = (dt: string, files: number) => ({
  partition: `dt=${dt}`,
  values: [dt],
  previous_location: `s3a://lake/events/dt=${dt}`,
  location: `s3a://lake/events/_lakesmith/r1/dt=${dt}`,
  files: Array.from({ length: files }, (_, i) => ({ path: `dt=${dt}/part-${i}.parquet`, size: 1000 + i })),
});

const recovered: Json[] = [];

function answer(kind: string, payload: Json): Json | PartedAnswer {
  if (kind === "catalog_sync")
    return {
      parts: [
        {
          tables: [
            {
              full_name: "hive.lake.events",
              catalog: "hive",
              schema: "lake",
              name: "events",
              format: "parquet",
              table_type: "EXTERNAL_TABLE",
              location: "s3a://lake/events",
              size_bytes: 900_000_000,
              has_partitions: true,
              updated_at: 1_767_225_600_000,
              detail: {},
            },
          ],
        },
      ],
      result: {
        mode: "full",
        catalogs: ["hive"],
        schemas_count: 1,
        tables_count: 1,
        unchanged_count: 0,
        below_min_size: 0,
        duration_ms: 4,
      },
    };
  if (kind === "onboarding") return RECIPE;
  if (kind === "crunch") {
    const superseded = [folder("2026-01-01", 3), folder("2026-01-02", 2)];
    return {
      job_type: "crunch",
      table_version_before: 1_767_225_600,
      committed_version: 1_767_225_700,
      files_before: 5,
      files_after: 2,
      bytes_before: 5010,
      bytes_after: 3000,
      drr: 40.1,
      rows_in: 100,
      rows_out: 100,
      partitions: [],
      partitions_crunched: 2,
      partitions_skipped: 0,
      settings: null,
      duration_ms: 30,
      superseded,
    };
  }
  if (kind === "recover") {
    recovered.push(payload);
    return {
      committed_version: 1_767_225_800,
      files: payload.folders.flatMap((f: Json) =>
        f.deletion_ids.map((id: string, i: number) => ({
          deletion_id: id,
          path: f.paths[i],
          outcome: "restored",
        })),
      ),
      duration_ms: 5,
    };
  }
  throw new Error(`unexpected ${kind}`);
}

describe("a Hive table in workerd", () => {
  it("onboards a metastore table, records a crunch's superseded folders and recovers one folder", async () => {
    await answeringAgent(
      "workerd-hive",
      {
        kinds: ["catalog_sync", "onboarding", "crunch", "recover"],
        capabilities: ["s3"],
        allow: ["s3://lake"],
        endpoints: [METASTORE],
      },
      answer,
    );
    await json("/api/v1/config", { method: "PUT", body: { min_eligible_table_size_gb: 0 } });
    const connection = await json(
      "/api/v1/catalog-connections",
      {
        method: "POST",
        body: {
          name: "workerd-hms",
          type: "hive_metastore",
          metastore_uri: METASTORE,
          username: "ls",
          password: PASSWORD,
        },
      },
      201,
    );
    const sync = await json(`/api/v1/catalog-connections/${connection.id}/sync`, { method: "POST" }, 202);
    expect((await ended(sync.id)).status).toBe("succeeded");

    const table = await json(
      "/api/v1/tables",
      {
        method: "POST",
        body: {
          name: "workerd.hive.events",
          catalog_connection_id: connection.id,
          catalog_table: "hive.lake.events",
        },
      },
      201,
    );
    // The metastore's s3a:// is the s3:// agents read and allow.
    expect(table).toMatchObject({ format: "hive", uri: "s3://lake/events" });
    expect((await ended(table.onboarding_job_id)).status).toBe("succeeded");

    const crunch = await json(
      `/api/v1/tables/${table.id}/crunch`,
      { method: "POST", body: { whole_table: true } },
      202,
    );
    expect((await ended(crunch.id)).status).toBe("succeeded");
    const records = (await json(`/api/v1/pending-deletions?source_job_id=${crunch.id}&limit=100`))
      .items as Json[];
    expect(records.map((r) => [r.partition, r.reason, r.action_type]).sort()).toEqual([
      ["dt=2026-01-01", "superseded", "crunch"],
      ["dt=2026-01-01", "superseded", "crunch"],
      ["dt=2026-01-01", "superseded", "crunch"],
      ["dt=2026-01-02", "superseded", "crunch"],
      ["dt=2026-01-02", "superseded", "crunch"],
    ]);
    const metrics = await json(`/api/v1/crunch/${crunch.id}/metrics`);
    expect(metrics.metrics).toMatchObject({ rows_in: 100, drr: 40.1 });

    const one = records.find((r) => r.partition === "dt=2026-01-02") as Json;
    const recovering = await json(
      `/api/v1/pending-deletions/${one.id}/recover`,
      { method: "POST", body: { reason: "old folder still read" } },
      202,
    );
    expect((await ended(recovering.recover_job_id)).status).toBe("succeeded");
    expect(recovered[0]).toMatchObject({
      format: "hive",
      catalog: {
        type: "hive_metastore",
        uri: METASTORE,
        database: "lake",
        table: "events",
        password: PASSWORD,
      },
      folders: [{ values: ["2026-01-02"], previous_location: "s3a://lake/events/dt=2026-01-02" }],
    });
    const after = (await json(`/api/v1/pending-deletions?source_job_id=${crunch.id}&limit=100`))
      .items as Json[];
    expect(after.filter((r) => r.status === "RECOVERED").map((r) => r.partition)).toEqual([
      "dt=2026-01-02",
      "dt=2026-01-02",
    ]);
    const job = await json(`/api/v1/jobs/${recovering.recover_job_id}`);
    expect(JSON.stringify(job)).not.toContain(PASSWORD);
  }, 60_000);
});
