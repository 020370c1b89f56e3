/**
 * Vendor command: `npm run license:issue -- --private-key <pem> --customer <name>
 * --expires <YYYY-MM-DD> [--features screen,reveal] --out <file>`. Signs a license with the
 * vendor's Ed25519 private key; the appliance checks it against the built-in public key.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { issueLicense } from "../src/license/license.ts";

const usage =
  "usage: npm run license:issue -- --private-key <pem file> --customer <name> --expires <YYYY-MM-DD> [--features screen,reveal] --out <file>";

try {
  const { values } = parseArgs({
    options: {
      "private-key": { type: "string" },
      customer: { type: "string" },
      expires: { type: "string" },
      features: { type: "string", default: "screen,reveal" },
      out: { type: "string" },
    },
  });
  const missing = ["private-key", "customer", "expires", "out"].filter(
    (k) => !values[k as keyof typeof values],
  );
  if (missing.length > 0) throw new Error(`missing --${missing.join(", --")}`);
  // npm runs workspace scripts in screen-appliance/; paths are meant relative to where npm was called.
  const fromCaller = (path: string) => resolve(process.env.INIT_CWD ?? process.cwd(), path);
  const expires = values.expires as string;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(expires) || Number.isNaN(Date.parse(expires))) {
    throw new Error(`--expires must be a date like 2027-12-31, got '${expires}'`);
  }
  const text = issueLicense(readFileSync(fromCaller(values["private-key"] as string), "utf8"), {
    customer: values.customer as string,
    expires,
    features: (values.features ?? "").split(",").filter(Boolean),
    issuedAt: new Date().toISOString(),
  });
  writeFileSync(fromCaller(values.out as string), text);
  console.log(`wrote ${fromCaller(values.out as string)}: license for ${values.customer} until ${expires}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  console.error(usage);
  process.exit(2);
}
