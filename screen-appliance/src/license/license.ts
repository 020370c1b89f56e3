/**
 * Licenses: a small JSON document (customer, expiry, features) signed with the vendor's Ed25519
 * key. The file holds `{"license": base64url(document bytes), "signature": base64url(signature)}`,
 * so the exact signed bytes travel unchanged and no JSON canonicalisation is needed.
 *
 * The appliance never refuses to start over its license: it reports the state on `/health` and
 * answers 503 with the reason on the screening routes, so an operator can see what is wrong.
 */
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { readFile } from "node:fs/promises";
import { z } from "zod";

export const LicenseDocument = z.strictObject({
  customer: z.string().min(1),
  /** Last valid day, inclusive, in UTC. */
  expires: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  features: z.array(z.string()),
  issuedAt: z.string(),
});
export type LicenseDocument = z.infer<typeof LicenseDocument>;

export type LicenseState =
  | { status: "valid"; license: LicenseDocument }
  | { status: "missing" | "invalid" | "expired"; reason: string; license?: LicenseDocument };

const LicenseFile = z.object({ license: z.string(), signature: z.string() });

/** Signs a license document with the vendor's private key (PEM) and returns the file's text. */
export function issueLicense(privateKeyPem: string, document: LicenseDocument): string {
  const key = createPrivateKey(privateKeyPem);
  const bytes = Buffer.from(JSON.stringify(LicenseDocument.parse(document)), "utf8");
  const signature = sign(null, bytes, key);
  return `${JSON.stringify({ license: bytes.toString("base64url"), signature: signature.toString("base64url") }, null, 2)}\n`;
}

/** Verifies a license file's text against the public key; never throws. */
export function verifyLicense(text: string, publicKey: KeyObject): LicenseState {
  let file: z.infer<typeof LicenseFile>;
  try {
    file = LicenseFile.parse(JSON.parse(text));
  } catch {
    return {
      status: "invalid",
      reason: "the license file is not a Lakesmith license (expected license and signature)",
    };
  }
  const bytes = Buffer.from(file.license, "base64url");
  if (!verify(null, bytes, publicKey, Buffer.from(file.signature, "base64url"))) {
    return { status: "invalid", reason: "the license signature does not match the vendor key" };
  }
  const parsed = LicenseDocument.safeParse(safeJson(bytes.toString("utf8")));
  if (!parsed.success) return { status: "invalid", reason: "the signed license document is malformed" };
  return { status: "valid", license: parsed.data };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Applies the clock: a valid license past its expiry day (UTC) is expired. */
export function licenseStateAt(state: LicenseState, now: Date): LicenseState {
  if (state.status !== "valid") return state;
  const lastMoment = Date.parse(`${state.license.expires}T23:59:59.999Z`);
  if (Number.isNaN(lastMoment) || now.getTime() > lastMoment) {
    return {
      status: "expired",
      reason: `the license for ${state.license.customer} expired on ${state.license.expires}`,
      license: state.license,
    };
  }
  return state;
}

/** Reads the license file at `path`; a missing or unreadable file is a state, not an error. */
export async function loadLicense(path: string, publicKeyPem: string): Promise<LicenseState> {
  let publicKey: KeyObject;
  try {
    publicKey = createPublicKey(publicKeyPem);
  } catch {
    return { status: "invalid", reason: "SCREEN_LICENSE_PUBLIC_KEY is not a PEM public key" };
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      status: "missing",
      reason:
        code === "ENOENT"
          ? `no license file at ${path}; mount one with -v <license>:/etc/screen/screen.lic`
          : `the license file at ${path} cannot be read (${code ?? "unknown error"})`,
    };
  }
  return verifyLicense(text, publicKey);
}
