/**
 * Vendor command, run once: `npm run license:keygen -- <folder>` writes a new Ed25519 key pair.
 * The private key stays with the vendor (never in git; `vendor-keys/` is ignored); the public key
 * goes into src/license/public-key.ts.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.argv[2] ?? "vendor-keys";
const privatePath = join(dir, "screen-vendor-private.pem");
if (existsSync(privatePath)) {
  console.error(`${privatePath} exists; refusing to overwrite a signing key that licenses may depend on`);
  process.exit(2);
}
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
mkdirSync(dir, { recursive: true });
writeFileSync(privatePath, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
console.log(`wrote ${privatePath} (keep it offline; it signs licenses)`);
console.log("public key for src/license/public-key.ts:");
console.log(publicKey.export({ type: "spki", format: "pem" }));
