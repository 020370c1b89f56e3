/**
 * Routing by store, whatever a URI's spelling: a table on Hadoop's `abfss://container@account...`
 * (or `gcs://`) needs the one capability agents announce for the store (`azure`, `gs`) and lies in
 * the canonical location agents' allow lists name (`azure://account/container/...`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentAbilities } from "../src/jobs/offer.ts";
import { ADMIN_KEY, startTestPlane, type TestPlane } from "./harness.ts";
import { createTable } from "./support/tables.ts";

let plane: TestPlane;
beforeAll(async () => {
  plane = await startTestPlane();
});
afterAll(() => plane.close());

const agent = (id: string, capabilities: string[], allow: string[]): AgentAbilities => ({
  id,
  kinds: ["onboarding"],
  capabilities,
  allow,
  endpoints: [],
});

describe("jobs on Azure and Google Cloud tables", () => {
  it("offers an abfss:// table's job to an agent allowed its azure:// location, not to others", async () => {
    const table = await createTable(plane, "azure.orders", {
      uri: "abfss://Raw@Acct1.dfs.core.windows.net/sales/orders",
    });
    const { jobs } = plane.services;
    expect(await jobs.offerNext(agent("agt_s3", ["s3"], ["s3://raw/"]))).toBeUndefined();
    expect(await jobs.offerNext(agent("agt_other", ["azure"], ["azure://acct1/other/"]))).toBeUndefined();
    const job = await jobs.offerNext(agent("agt_azure", ["azure"], ["azure://acct1/raw/sales/"]));
    expect(job?.id).toBe(table.onboarding_job_id);
    expect(job?.requires).toContain("azure");
    expect(job?.requires).not.toContain("abfss");
    expect(job?.locations).toEqual(["azure://acct1/raw/sales/orders/"]);
  });

  it("offers a gcs:// table's job to an agent announcing gs", async () => {
    const table = await createTable(plane, "gcs.events", { uri: "gcs://lake-eu/events" });
    const job = await plane.services.jobs.offerNext(agent("agt_gs", ["gs"], ["gs://lake-eu/"]));
    expect(job?.id).toBe(table.onboarding_job_id);
    expect(job?.requires).toContain("gs");
    expect(job?.locations).toEqual(["gs://lake-eu/events/"]);
  });

  it("refuses an Azure spelling that names no account, saying which to use", async () => {
    const res = await plane.call("POST", "/api/v1/tables", {
      token: ADMIN_KEY,
      body: { name: "az.orders", uri: "az://raw/sales/orders", format: "delta", priority: "P2" },
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain("azure://<account>/<container>/<path>");
  });
});
