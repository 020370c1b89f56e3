/**
 * Object maintenance through the API (document 1): locations (create with each method, the
 * not-yet-supported choices as 422 naming the field, list, get, patch, archive and un-archive,
 * delete keeping the prefixes), managed prefixes (filters, detail with the location's summary and
 * policy), enable (201, 200, 404, 422) and policies (versions appended atomically, the previous
 * deactivated, an unmanaged prefix activated, delete dropping every version).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlane, type TestPlane } from "./harness.ts";
import { adminJson } from "./support/catalogs.ts";

const BASE = "/api/v1/object-maintenance";
let plane: TestPlane;
let admin: ReturnType<typeof adminJson>;
let seq = 0;

beforeAll(async () => {
  plane = await startTestPlane();
  admin = adminJson(plane);
});
afterAll(() => plane.close());

const registered = async (extra: Record<string, unknown> = {}) => {
  const n = ++seq;
  const res = await admin("POST", `${BASE}/locations`, {
    name: `landing-${n}`,
    uri: `s3://lake/landing/${n}/`,
    ...extra,
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};

const onlyPrefix = async (locationId: string) => {
  const res = await admin("GET", `${BASE}/locations/${locationId}/managed-prefixes`);
  expect(res.status).toBe(200);
  expect(res.body.items).toHaveLength(1);
  return res.body.items[0];
};

describe("locations", () => {
  it("registers a use-as-registered location Active at once, its URI its one unmanaged prefix", async () => {
    const location = await registered({ description: "raw events" });
    expect(location).toMatchObject({
      uri: `s3://lake/landing/${seq}`,
      discovery_method: "use_as_registered",
      status: "Active",
      skip_age_days: 2,
      discovery_cadence: "daily",
      input_format: "json",
      run_discovery_immediately: false,
      prefixes: 1,
      description: "raw events",
    });
    const prefix = await onlyPrefix(location.id);
    expect(prefix).toMatchObject({
      location_id: location.id,
      uri: location.uri,
      management_state: "unmanaged",
      source_state: "present",
    });
  });

  it("registers an inventory-report location with its inventory settings, Discovering at once (Pending without run_discovery_immediately)", async () => {
    const location = await registered({
      discovery_method: "inventory_report",
      inventory_uri: "s3://inventory/lake/daily/",
      discovery_cadence: "weekly",
      skip_age_days: 0,
    });
    const attempts = await admin("GET", `${BASE}/locations/${location.id}/discovery/schedules`);
    expect(attempts.body.items).toMatchObject([{ status: "queued", trigger: "creation" }]);
    const later = await registered({
      discovery_method: "inventory_report",
      inventory_uri: "s3://inventory/lake/daily/",
      run_discovery_immediately: false,
    });
    expect(later).toMatchObject({ status: "Pending", run_discovery_immediately: false });
    expect(location).toMatchObject({
      status: "Discovering",
      inventory_uri: "s3://inventory/lake/daily",
      inventory_format: "parquet",
      discovery_cadence: "weekly",
      skip_age_days: 0,
      run_discovery_immediately: true,
      prefixes: 0,
    });
  });

  it("answers 422 naming the field for what is malformed or not yet supported", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ discovery_method: "direct_listing" }, "discovery_method", /not yet supported/],
      [{ discovery_method: "inventory_report" }, "inventory_uri", /required/],
      [{ inventory_uri: "s3://inv/x" }, "inventory_uri", /only with/],
      [
        { discovery_method: "inventory_report", inventory_uri: "s3://inv/x", inventory_format: "orc" },
        "inventory_format",
        /not yet supported/,
      ],
      [{ input_format: "parquet" }, "input_format", /not yet supported/],
      [{ uri: "hdfs://nn/x" }, "uri", /not a location scheme/],
      [{ uri: "not a uri" }, "uri", /./],
      [{ name: "x".repeat(101) }, "name", /./],
      [{ description: "x".repeat(501) }, "description", /./],
      [{ skip_age_days: 366 }, "skip_age_days", /./],
      [{ colour: "red" }, "colour", /./],
    ];
    for (const [extra, field, message] of cases) {
      const res = await admin("POST", `${BASE}/locations`, {
        name: `bad-${++seq}`,
        uri: "s3://lake/bad",
        ...extra,
      });
      expect(res.status, `${field}: ${res.text}`).toBe(422);
      expect(res.text).toContain(field);
      expect(res.text).toMatch(message);
    }
  });

  it("answers 409 for a taken name or a URI another location's prefix has", async () => {
    const location = await registered();
    expect(
      (await admin("POST", `${BASE}/locations`, { name: location.name, uri: "s3://lake/other" })).status,
    ).toBe(409);
    const twin = await admin("POST", `${BASE}/locations`, { name: `twin-${++seq}`, uri: `${location.uri}/` });
    expect(twin.status).toBe(409);
    expect(twin.text).toContain(location.id);
  });

  it("lists by name with a status filter, gets one, and 404s an unknown id", async () => {
    const location = await registered();
    const all = await admin("GET", `${BASE}/locations?limit=1000`);
    expect(all.body.items.map((l: { id: string }) => l.id)).toContain(location.id);
    const names = all.body.items.map((l: { name: string }) => l.name);
    expect(names).toEqual([...names].sort());
    const pending = await admin("GET", `${BASE}/locations?status=Pending&limit=1000`);
    expect(pending.body.items.every((l: { status: string }) => l.status === "Pending")).toBe(true);
    expect((await admin("GET", `${BASE}/locations/${location.id}`)).body.name).toBe(location.name);
    expect((await admin("GET", `${BASE}/locations/loc_nope`)).status).toBe(404);
  });

  it("archives (pausing active prefixes, deleting nothing) and un-archives (resuming them); other status changes are 422", async () => {
    const location = await registered();
    const prefix = await onlyPrefix(location.id);
    expect(
      (await admin("POST", `${BASE}/locations/${location.id}/prefixes/${prefix.id}/enable`)).status,
    ).toBe(201);

    const archived = await admin("PATCH", `${BASE}/locations/${location.id}`, {
      status: "Archived",
      description: "old",
    });
    expect(archived.status, archived.text).toBe(200);
    expect(archived.body).toMatchObject({ status: "Archived", description: "old", prefixes: 1 });
    expect(await onlyPrefix(location.id)).toMatchObject({
      management_state: "paused",
      state_reason: "its location is archived",
    });
    const enable = await admin("POST", `${BASE}/locations/${location.id}/prefixes/${prefix.id}/enable`);
    expect(enable.status).toBe(422);
    expect(enable.text).toContain("archived");

    expect((await admin("PATCH", `${BASE}/locations/${location.id}`, { status: "Discovering" })).status).toBe(
      422,
    );
    const back = await admin("PATCH", `${BASE}/locations/${location.id}`, { status: "Active" });
    expect(back.body.status).toBe("Active");
    expect(await onlyPrefix(location.id)).toMatchObject({ management_state: "active", state_reason: null });
    expect((await admin("PATCH", `${BASE}/locations/${location.id}`, { status: "Pending" })).status).toBe(
      422,
    );
    expect(
      (await admin("PATCH", `${BASE}/locations/${location.id}`, { uri: "s3://lake/moved" })).status,
    ).toBe(422);
  });

  it("deletes a location and keeps its prefixes with location_id null; registering the URI again takes the prefix back", async () => {
    const location = await registered();
    const prefix = await onlyPrefix(location.id);
    expect((await admin("DELETE", `${BASE}/locations/${location.id}`)).status).toBe(204);
    expect((await admin("GET", `${BASE}/locations/${location.id}`)).status).toBe(404);
    const kept = await admin("GET", `${BASE}/prefixes/${prefix.id}`);
    expect(kept.body).toMatchObject({ location_id: null, location: null, uri: location.uri });
    expect((await admin("DELETE", `${BASE}/locations/${location.id}`)).status).toBe(404);

    const again = await admin("POST", `${BASE}/locations`, { name: `again-${++seq}`, uri: location.uri });
    expect(again.status, again.text).toBe(201);
    expect(await onlyPrefix(again.body.id)).toMatchObject({ id: prefix.id, location_id: again.body.id });
  });
});

describe("prefixes and policies", () => {
  it("filters prefixes by location and states, and shows one with its location's summary", async () => {
    const location = await registered();
    const prefix = await onlyPrefix(location.id);
    const byLocation = await admin("GET", `${BASE}/prefixes?location_id=${location.id}`);
    expect(byLocation.body).toMatchObject({ total: 1, items: [{ id: prefix.id }] });
    const unmanaged = await admin(
      "GET",
      `${BASE}/prefixes?management_state=unmanaged&source_state=present&limit=1000`,
    );
    expect(unmanaged.body.items.map((p: { id: string }) => p.id)).toContain(prefix.id);
    const active = await admin("GET", `${BASE}/prefixes?management_state=active&location_id=${location.id}`);
    expect(active.body.total).toBe(0);
    expect((await admin("GET", `${BASE}/prefixes?management_state=sleeping`)).status).toBe(422);
    const detail = await admin("GET", `${BASE}/prefixes/${prefix.id}`);
    expect(detail.body).toMatchObject({
      id: prefix.id,
      location: { id: location.id, name: location.name, uri: location.uri, status: "Active" },
      policy: null,
    });
    expect((await admin("GET", `${BASE}/prefixes/pfx_nope`)).status).toBe(404);
  });

  it("enables: 201 newly, 200 already, 404 for an unknown location or prefix or one of another location", async () => {
    const location = await registered();
    const other = await registered();
    const prefix = await onlyPrefix(location.id);
    const enable = (loc: string, pfx: string) =>
      admin("POST", `${BASE}/locations/${loc}/prefixes/${pfx}/enable`);
    const first = await enable(location.id, prefix.id);
    expect(first.status).toBe(201);
    expect(first.body.management_state).toBe("active");
    expect((await enable(location.id, prefix.id)).status).toBe(200);
    expect((await enable("loc_nope", prefix.id)).status).toBe(404);
    expect((await enable(location.id, "pfx_nope")).status).toBe(404);
    expect((await enable(other.id, prefix.id)).status).toBe(404);
  });

  it("versions policies: each PUT appends a version and deactivates the last; an unmanaged prefix becomes active; DELETE drops them all", async () => {
    const location = await registered();
    const prefix = await onlyPrefix(location.id);
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}/policy`)).status).toBe(404);

    const put = (body: unknown) => admin("PUT", `${BASE}/prefixes/${prefix.id}/policy`, body);
    const first = await put({ convert: { target_prefix: "s3://lake/curated/events/" } });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      version: 1,
      active: true,
      policy: {
        convert: {
          enabled: true,
          target_prefix: "s3://lake/curated/events",
          cadence: "daily",
          run_time_utc: "02:00",
          target_file_size_mb: 128,
        },
      },
    });
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}`)).body.management_state).toBe("active");

    const second = await put({
      convert: { target_prefix: "s3://lake/curated/events", cadence: "weekly" },
      remove_inputs: { retention_days: 7 },
    });
    expect(second.body).toMatchObject({ version: 2, active: true });
    const versions = await admin("GET", `${BASE}/prefixes/${prefix.id}/policy/versions`);
    expect(
      versions.body.items.map((v: { version: number; active: boolean }) => [v.version, v.active]),
    ).toEqual([
      [2, true],
      [1, false],
    ]);
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}/policy`)).body.version).toBe(2);
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}`)).body.policy.version).toBe(2);

    // Concurrent PUTs: each gets its own version, exactly one is active.
    const many = await Promise.all(
      [1, 2, 3, 4].map((d) =>
        put({ remove_inputs: undefined, convert: { target_prefix: `s3://lake/curated/v${d}` } }),
      ),
    );
    expect(many.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const after = await admin("GET", `${BASE}/prefixes/${prefix.id}/policy/versions?limit=100`);
    expect(after.body.items.map((v: { version: number }) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    expect(after.body.items.filter((v: { active: boolean }) => v.active)).toHaveLength(1);

    expect((await admin("DELETE", `${BASE}/prefixes/${prefix.id}/policy`)).status).toBe(204);
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}/policy/versions`)).body.total).toBe(0);
    expect((await admin("DELETE", `${BASE}/prefixes/${prefix.id}/policy`)).status).toBe(404);
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}`)).body.management_state).toBe("active");
  });

  it("refuses a policy whose target is inside the prefix, on another store, or that removes without converting", async () => {
    const location = await registered();
    const prefix = await onlyPrefix(location.id);
    const put = (body: unknown) => admin("PUT", `${BASE}/prefixes/${prefix.id}/policy`, body);
    for (const [body, field] of [
      [{ convert: { target_prefix: `${prefix.uri}/parquet` } }, "convert.target_prefix"],
      [{ convert: { target_prefix: "s3://elsewhere/curated" } }, "convert.target_prefix"],
      [{ remove_inputs: { retention_days: 3 } }, "remove_inputs"],
      [{ convert: { target_prefix: "s3://lake/c", run_time_utc: "25:00" } }, "run_time_utc"],
      [{ convert: { target_prefix: "s3://lake/c", speed: "fast" } }, "speed"],
    ] as const) {
      const res = await put(body);
      expect(res.status, res.text).toBe(422);
      expect(res.text).toContain(field);
    }
    expect((await admin("GET", `${BASE}/prefixes/${prefix.id}/policy/versions`)).body.total).toBe(0);
    expect(
      (await admin("PUT", `${BASE}/prefixes/pfx_nope/policy`, { convert: { target_prefix: "s3://lake/c" } }))
        .status,
    ).toBe(404);
  });
});
