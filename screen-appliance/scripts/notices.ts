/**
 * `npm run notices -w screen-appliance`: writes THIRD_PARTY_NOTICES.md, the licences of everything
 * the appliance image ships (scripts/lib/notices/), and exits 1 without writing when anything
 * breaks the licence policy, naming each package or item and the reason.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildNotices, NOTICES_FILE } from "./lib/notices/third-party-notices.ts";

const root = join(import.meta.dirname, "../..");
const { markdown, packages, violations } = buildNotices(root);
if (violations.length > 0) {
  console.error(`[notices] ${violations.length} licence problem(s); ${NOTICES_FILE} not written:`);
  for (const violation of violations) console.error(`  - ${violation}`);
  process.exit(1);
}
const path = join(root, NOTICES_FILE);
const before = existsSync(path) ? readFileSync(path, "utf8") : "";
writeFileSync(path, markdown);
console.log(
  `[notices] ${NOTICES_FILE}: ${packages.length} npm packages; ${before === markdown ? "unchanged" : "updated"}`,
);
