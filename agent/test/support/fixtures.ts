/**
 * Where the given test data lives: `shared/` beside the checkout (`<repo>/../shared`), as on every
 * developer machine and in CI. A clone made elsewhere from a local checkout (`git clone . /tmp/x`)
 * finds the one beside the checkout it was cloned from; `LAKESMITH_SHARED` points anywhere else.
 * Tests copy fixtures before they write; nothing writes there.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";

const REPO = join(import.meta.dirname, "../../..");

/** The `shared/` beside the local repository this one was cloned from, if it was. */
function besideOrigin(): string | undefined {
  try {
    const origin = execFileSync("git", ["-C", REPO, "config", "--get", "remote.origin.url"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    const path = origin.startsWith("file://") ? new URL(origin).pathname : origin;
    return isAbsolute(path) ? join(path, "../shared") : undefined;
  } catch {
    return undefined;
  }
}

function sharedFolder(): string {
  if (process.env.LAKESMITH_SHARED) return process.env.LAKESMITH_SHARED;
  const beside = join(REPO, "../shared");
  if (existsSync(join(beside, "fixtures"))) return beside;
  const origin = besideOrigin();
  if (origin && existsSync(join(origin, "fixtures"))) return origin;
  throw new Error(
    `no test data at ${beside}/fixtures: put the given shared/ folder beside the checkout, or set LAKESMITH_SHARED`,
  );
}

const SHARED = sharedFolder();

/** The Delta tables other engines wrote (`shared/fixtures/delta`). */
export const DELTA_FIXTURES = join(SHARED, "fixtures/delta");
