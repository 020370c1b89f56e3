// Object maintenance through the Worker build on D1: a location registered as it is (Active with
// its one prefix in the same batch), the prefix enabled, two policy versions (the version computed
// inside the D1 batch, the previous deactivated), the location archived and deleted with its
// prefix kept.
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
