// Object maintenance through the Worker build on D1: a location registered as it is (Active with
// its one prefix in the same batch), the prefix enabled, two policy versions (the version computed
// inside the D1 batch, the previous deactivated), the location archived and deleted with its
// prefix kept; an ad-hoc conversion queued and listed as an action and a run.
import { describe, expect, it } from "vitest";
import { call, type Json, json } from "./support/client.ts";

const BASE = "/api/v1/object-maintenance";

describe("object maintenance in workerd", () => {
  it("registers a location, enables its prefix, versions its policy, archives and deletes it", async () => {
    const location = await json(
      `${BASE}/locations`,
      { method: "POST", body: { name: "workerd-landing", uri: "s3://lake/landing/events/" } },
      201,
    );
    expect(location).toMatchObject({ status: "Active", uri: "s3://lake/landing/events", prefixes: 1 });
    const [prefix] = (await json(`${BASE}/locations/${location.id}/managed-prefixes`)).items as Json[];
    expect(prefix).toMatchObject({ management_state: "unmanaged", source_state: "present" });
    await json(`${BASE}/locations/${location.id}/prefixes/${prefix?.id}/enable`, { method: "POST" }, 201);
    await json(`${BASE}/locations/${location.id}/prefixes/${prefix?.id}/enable`, { method: "POST" }, 200);

    const body = { convert: { target_prefix: "s3://lake/curated/events" } };
    await json(`${BASE}/prefixes/${prefix?.id}/policy`, { method: "PUT", body });
    const second = await json(`${BASE}/prefixes/${prefix?.id}/policy`, {
      method: "PUT",
      body: { ...body, remove_inputs: { retention_days: 14 } },
    });
    expect(second).toMatchObject({ version: 2, active: true });
    const versions = (await json(`${BASE}/prefixes/${prefix?.id}/policy/versions`)).items as Json[];
    expect(versions.map((v) => [v.version, v.active])).toEqual([
      [2, true],
      [1, false],
    ]);

    // An ad-hoc conversion: its job and run row in one D1 batch, listed as an action and a run.
    const action = await json(
      `${BASE}/prefixes/${prefix?.id}/actions`,
      { method: "POST", body: { action: "convert" } },
      202,
    );
    expect(action).toMatchObject({ action: "convert", status: "queued", policy_version: 2 });
    const runs = (await json(`${BASE}/prefixes/${prefix?.id}/runs`)).items as Json[];
    expect(runs.map((r) => [r.job_id, r.trigger])).toEqual([[action.job_id, "action"]]);
    const busy = await call(`${BASE}/prefixes/${prefix?.id}/actions`, {
      method: "POST",
      body: { action: "remove_inputs" },
    });
    expect(busy.status).toBe(409);
    expect((await call(`/api/v1/jobs/${action.job_id}/cancel`, { method: "POST" })).status).toBeLessThan(300);
    expect(
      ((await json(`${BASE}/prefixes/${prefix?.id}/actions`)).items as Json[]).map((a) => a.status),
    ).toEqual(["cancelled"]);

    const archived = await json(`${BASE}/locations/${location.id}`, {
      method: "PATCH",
      body: { status: "Archived" },
    });
    expect(archived.status).toBe("Archived");
    expect((await json(`${BASE}/prefixes/${prefix?.id}`)).management_state).toBe("paused");
    expect((await call(`${BASE}/locations/${location.id}`, { method: "DELETE" })).status).toBe(204);
    expect(await json(`${BASE}/prefixes/${prefix?.id}`)).toMatchObject({ location_id: null, location: null });
  });
});
