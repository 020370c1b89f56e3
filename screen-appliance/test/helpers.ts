/**
 * Test wiring: a throwaway vendor key pair, licenses signed with it, and the app built with the
 * committed ONNX models on CPU.
 */
import { generateKeyPairSync } from "node:crypto";
import { expect } from "vitest";
import { createApp } from "../src/app.ts";
import { issueLicense, type LicenseState, licenseStateAt, verifyLicense } from "../src/license/license.ts";
import { createMetrics } from "../src/metrics.ts";
import { DEFAULT_MODEL_DIR, type LoadedModels, loadModels } from "../src/models.ts";

export const vendor = generateKeyPairSync("ed25519");
export const vendorPublicPem = vendor.publicKey.export({ type: "spki", format: "pem" }).toString();
export const vendorPrivatePem = vendor.privateKey.export({ type: "pkcs8", format: "pem" }).toString();

export function licenseText(expires = "2099-12-31", customer = "Acme Health"): string {
  return issueLicense(vendorPrivatePem, {
    customer,
    expires,
    features: ["screen", "reveal"],
    issuedAt: "2026-01-01T00:00:00Z",
  });
}

let models: Promise<LoadedModels> | undefined;
export function testModels(): Promise<LoadedModels> {
  models ??= loadModels(DEFAULT_MODEL_DIR, "cpu");
  return models;
}

export async function testApp(options: { license?: LicenseState; maxBodyBytes?: number } = {}) {
  const license = options.license ?? verifyLicense(licenseText(), vendor.publicKey);
  const licenseNow = () => licenseStateAt(license, new Date());
  return createApp({
    ...(await testModels()),
    license: licenseNow,
    metrics: createMetrics(licenseNow),
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
  });
}

export type TestApp = Awaited<ReturnType<typeof testApp>>;

export function post(app: TestApp, path: string, body: unknown) {
  return app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The problem+json body of an error response, after checking its content type. */
export async function problem(res: Response) {
  expect(res.headers.get("content-type")).toContain("application/problem+json");
  return (await res.json()) as {
    type: string;
    title: string;
    status: number;
    detail: string;
    errors?: { path: string; message: string }[];
  };
}

/** A 32-byte key as the API expects it. */
export const KEY = Buffer.alloc(32, 7).toString("base64");
export const OTHER_KEY = Buffer.alloc(32, 9).toString("base64url");
