import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { issueLicense, type LicenseState, licenseStateAt, loadLicense } from "../src/license/license.ts";
import { licenseText, post, testApp, vendorPrivatePem, vendorPublicPem } from "./helpers.ts";

async function licenseFile(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "screen-lic-"));
  const path = join(dir, "screen.lic");
  await writeFile(path, text);
  return path;
}

async function refused(license: LicenseState, reason: RegExp, status: string = license.status) {
  const app = await testApp({ license });
  const health = (await (await app.request("/health")).json()) as {
    status: string;
    license: { status: string; reason: string };
  };
  expect(health.status).toBe("unlicensed");
  expect(health.license.status).toBe(status);
  expect(health.license.reason).toMatch(reason);
  for (const [path, body] of [
    ["/screen", { data: "a@b.io" }],
    ["/reveal", { redactedData: "x", redactionMaps: [], transformationType: "TRANSFORMATION_TYPE_NUMBERED" }],
  ] as const) {
    const res = await post(app, path, body);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toMatch(reason);
  }
}

describe("license", () => {
  it("serves when the license file is signed by the vendor key and not expired", async () => {
    const state = await loadLicense(
      await licenseFile(licenseText("2099-12-31", "Acme Health")),
      vendorPublicPem,
    );
    expect(state).toMatchObject({
      status: "valid",
      license: { customer: "Acme Health", expires: "2099-12-31" },
    });
    const app = await testApp({ license: state });
    const health = (await (await app.request("/health")).json()) as { status: string; license: object };
    expect(health).toMatchObject({ status: "ok", license: { status: "valid", customer: "Acme Health" } });
    expect((await post(app, "/screen", { data: "hi" })).status).toBe(200);
  });

  it("starts without a license file, says so on /health and answers 503", async () => {
    const state = await loadLicense("/nonexistent/screen.lic", vendorPublicPem);
    expect(state.status).toBe("missing");
    await refused(state, /no license file at \/nonexistent\/screen\.lic/);
  });

  it("refuses a license signed by another key", async () => {
    const other = generateKeyPairSync("ed25519")
      .privateKey.export({ type: "pkcs8", format: "pem" })
      .toString();
    const forged = issueLicense(other, {
      customer: "Mallory",
      expires: "2099-12-31",
      features: [],
      issuedAt: "x",
    });
    const state = await loadLicense(await licenseFile(forged), vendorPublicPem);
    await refused(state, /signature does not match/);
  });

  it("refuses a license whose document was edited after signing", async () => {
    const file = JSON.parse(licenseText("2020-01-01")) as { license: string; signature: string };
    const edited = Buffer.from(
      Buffer.from(file.license, "base64url").toString().replace("2020-01-01", "2099-01-01"),
    );
    const tampered = JSON.stringify({ ...file, license: edited.toString("base64url") });
    await refused(
      await loadLicense(await licenseFile(tampered), vendorPublicPem),
      /signature does not match/,
    );
  });

  it("refuses a file that is not a license", async () => {
    await refused(await loadLicense(await licenseFile("hello"), vendorPublicPem), /not a Lakesmith license/);
  });

  it("is valid through its expiry day (UTC) and expired the day after", async () => {
    const state = await loadLicense(await licenseFile(licenseText("2026-03-31")), vendorPublicPem);
    expect(licenseStateAt(state, new Date("2026-03-31T23:59:00Z")).status).toBe("valid");
    const expired = licenseStateAt(state, new Date("2026-04-01T00:00:01Z"));
    expect(expired.status).toBe("expired");
    await refused(
      await loadLicense(await licenseFile(licenseText("2020-01-01")), vendorPublicPem),
      /expired on 2020-01-01/,
      "expired",
    );
  });

  it("answers 403 on /reveal when the license covers screening only", async () => {
    const screenOnly = issueLicense(vendorPrivatePem, {
      customer: "Initech",
      expires: "2099-12-31",
      features: ["screen"],
      issuedAt: "2026-01-01T00:00:00Z",
    });
    const app = await testApp({ license: await loadLicense(await licenseFile(screenOnly), vendorPublicPem) });
    expect((await post(app, "/screen", { data: "hi" })).status).toBe(200);
    const res = await post(app, "/reveal", {
      redactedData: "x",
      redactionMaps: [],
      transformationType: "TRANSFORMATION_TYPE_NUMBERED",
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { detail: string }).detail).toContain("'reveal' feature");
  });

  it("issues a license with the vendor command that the appliance accepts", async () => {
    const dir = await mkdtemp(join(tmpdir(), "screen-vendor-"));
    const keyPath = join(dir, "vendor.pem");
    const out = join(dir, "customer.lic");
    await writeFile(keyPath, vendorPrivatePem);
    const run = promisify(execFile);
    await run(
      process.execPath,
      [
        "--import",
        "tsx",
        "scripts/license-issue.ts",
        "--private-key",
        keyPath,
        "--customer",
        "Globex",
        "--expires",
        "2030-06-30",
        "--out",
        out,
      ],
      { cwd: join(import.meta.dirname, "..") },
    );
    const state = await loadLicense(out, vendorPublicPem);
    expect(state).toMatchObject({ status: "valid", license: { customer: "Globex", expires: "2030-06-30" } });
    expect(await readFile(out, "utf8")).not.toContain("PRIVATE");
  });
});
