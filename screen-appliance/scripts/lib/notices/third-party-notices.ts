/**
 * Builds screen-appliance/THIRD_PARTY_NOTICES.md in memory, and lists every policy violation.
 *
 * - Packages: `shippedPackages` (from the lockfile), each with its licence (a correction from
 *   hand-maintained.ts, else what the lockfile recorded, else the installed package.json) and
 *   its licence text: every LICENSE/LICENCE/COPYING/COPYRIGHT/NOTICE file at the top of the
 *   installed package, or a correction's text.
 * - Texts are printed once each; packages with the identical text share it.
 * - Violations: a licence outside the policy, no licence, no licence text, or a node_modules that
 *   does not match the lockfile. The output never depends on the machine or the date.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ITEMS, type NoticeItem, PACKAGE_CORRECTIONS } from "./hand-maintained.ts";
import { ALLOWED_FOR_ITEMS, policyViolation } from "./license-policy.ts";
import {
  IMAGE_INSTALL,
  type Lockfile,
  readLockfile,
  type ShippedPackage,
  shippedPackages,
} from "./shipped-packages.ts";

export const NOTICES_FILE = "screen-appliance/THIRD_PARTY_NOTICES.md";
export const NOTICES_IN_IMAGE = "/app/THIRD_PARTY_NOTICES.md";

export interface PackageNotice extends ShippedPackage {
  /** Where the text came from: file names in the package, or a correction's source. */
  textSource: string;
  text: string | undefined;
  correction: string | undefined;
}

export interface Notices {
  markdown: string;
  packages: PackageNotice[];
  violations: string[];
}

const LICENSE_FILE = /^(licen[cs]e|copying|copyright|notice)([-._ ][^/]*)?$/i;
const NOT_A_LICENSE = /\.(c?m?[jt]s|json|sh|ps1)$/i;

export function buildNotices(repoRoot: string, lock: Lockfile = readLockfile(repoRoot)): Notices {
  const violations: string[] = [];
  const shipped = shippedPackages(lock);
  const packages = shipped.map((pkg) => packageNotice(repoRoot, pkg, violations));
  for (const pkg of packages) {
    const correction = PACKAGE_CORRECTIONS[pkg.name];
    if (correction?.textFrom) {
      const source = packages.find((other) => other.name === correction.textFrom);
      if (source) {
        pkg.text = source.text;
        pkg.textSource = `${source.name}'s ${source.textSource}`;
      } else {
        violations.push(
          `${pkg.name}: its text comes from ${correction.textFrom}, which the image does not ship`,
        );
      }
    }
    const why = policyViolation(pkg.license);
    if (why) violations.push(`${pkg.name}@${pkg.version} (${pkg.location}): ${why}`);
    if (!pkg.text) {
      violations.push(
        `${pkg.name}@${pkg.version} (${pkg.location}) ships no licence text; add one to PACKAGE_CORRECTIONS in screen-appliance/scripts/lib/notices/hand-maintained.ts, with its source`,
      );
    }
  }
  for (const item of ITEMS) {
    const why = policyViolation(item.license, ALLOWED_FOR_ITEMS);
    if (why) violations.push(`${item.name}: ${why}`);
  }
  for (const name of Object.keys(PACKAGE_CORRECTIONS)) {
    if (!shipped.some((pkg) => pkg.name === name)) {
      violations.push(`PACKAGE_CORRECTIONS names ${name}, which the image no longer ships; remove it`);
    }
  }
  return { markdown: render(packages, ITEMS), packages, violations };
}

function packageNotice(repoRoot: string, pkg: ShippedPackage, violations: string[]): PackageNotice {
  const correction = PACKAGE_CORRECTIONS[pkg.name];
  const dir = join(repoRoot, pkg.location);
  const manifestPath = join(dir, "package.json");
  const notice: PackageNotice = {
    ...pkg,
    license: correction?.license ?? pkg.license,
    text: correction?.text,
    textSource: correction?.textSource ?? "",
    correction: correction
      ? `${correction.license ?? pkg.license ?? "no licence"}: ${correction.why}`
      : undefined,
  };
  if (!existsSync(manifestPath)) {
    if (!correction?.text && !correction?.textFrom) {
      violations.push(
        `${pkg.location} is not installed; run npm ci (the notice reads licence texts from node_modules)`,
      );
    }
    return notice;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    version?: string;
    license?: string | { type?: string };
    licenses?: { type?: string }[];
  };
  if (manifest.version !== pkg.version) {
    violations.push(
      `${pkg.location} is ${manifest.version} but package-lock.json has ${pkg.version}; run npm ci`,
    );
  }
  notice.license ??=
    typeof manifest.license === "string"
      ? manifest.license
      : (manifest.license?.type ?? manifest.licenses?.map((l) => l.type).join(" OR "));
  if (notice.text === undefined) {
    const files = readdirSync(dir)
      .filter((file) => LICENSE_FILE.test(file) && !NOT_A_LICENSE.test(file))
      .sort();
    if (files.length > 0) {
      notice.text = files.map((file) => normalize(readFileSync(join(dir, file), "utf8"))).join("\n\n");
      notice.textSource = files.join(", ");
    }
  }
  return notice;
}

function normalize(text: string): string {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+$/gm, "")
    .trim();
}

function render(packages: PackageNotice[], items: NoticeItem[]): string {
  const texts = new Map<string, PackageNotice[]>();
  for (const pkg of packages) {
    const key = normalize(pkg.text ?? "");
    texts.set(key, [...(texts.get(key) ?? []), pkg]);
  }
  const textIds = new Map([...texts.keys()].map((text, i) => [text, `T${i + 1}`]));
  const byLicense = new Map<string, number>();
  for (const pkg of packages)
    byLicense.set(pkg.license ?? "none", (byLicense.get(pkg.license ?? "none") ?? 0) + 1);
  const corrected = packages.filter((pkg) => pkg.correction);

  const out: string[] = [
    "# Third-party notices: Lakesmith screening appliance",
    "",
    `The image \`lakesmith/screen-appliance\` (built from \`screen-appliance/Dockerfile\`) contains the third-party software, models and data listed here, with their licences. The image carries this file at \`${NOTICES_IN_IMAGE}\`.`,
    "",
    "Generated by `npm run notices -w screen-appliance` from `package-lock.json` and `screen-appliance/scripts/lib/notices/hand-maintained.ts`; `screen-appliance/test/notices.test.ts` fails when it is out of date. Do not edit it by hand.",
    "",
    "1. Models, native libraries, base image and runtime",
    `2. npm packages (${packages.length})`,
    `3. Licence texts of the npm packages (${texts.size})`,
    "",
    "## 1. Models, native libraries, base image and runtime",
    "",
  ];
  for (const item of items) {
    out.push(`### ${item.name}`, "");
    out.push(`- In the image: ${item.inImage.join("; ")}`);
    out.push(`- Source: ${item.source}`);
    out.push(`- Licence: ${item.license} (${item.licenseUrl})`);
    if (item.attribution) out.push(`- Attribution: ${item.attribution}`);
    if (item.trainedFrom) {
      out.push("- Trained from:");
      for (const data of item.trainedFrom) {
        out.push(
          `  - ${data.name}. Licence: ${data.license}. Source: ${data.source}. Credit: ${data.attribution}. Requires: ${data.requires}.`,
        );
      }
    }
    for (const note of item.notes) out.push(`- ${note}`);
    out.push("");
  }

  out.push(
    "## 2. npm packages",
    "",
    `Installed by \`${IMAGE_INSTALL.command}\` for ${IMAGE_INSTALL.platform.os} ${IMAGE_INSTALL.platform.cpu} (${IMAGE_INSTALL.platform.libc}), under \`/app/node_modules\`.`,
    "",
    "| Licence | Packages |",
    "| --- | ---: |",
    ...[...byLicense].sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1)).map(([l, n]) => `| ${l} | ${n} |`),
    "",
    "| Package | Version | Licence | Text |",
    "| --- | --- | --- | --- |",
    ...packages.map(
      (pkg) =>
        `| ${pkg.name} | ${pkg.version} | ${pkg.license ?? "none"} | ${textIds.get(normalize(pkg.text ?? ""))} |`,
    ),
    "",
  );
  if (corrected.length > 0) {
    out.push("Where a package's own metadata is incomplete, this notice corrects it:", "");
    for (const pkg of corrected) out.push(`- ${pkg.name}: ${pkg.correction}.`);
    out.push("");
  }

  out.push("## 3. Licence texts of the npm packages", "");
  for (const [text, users] of texts) {
    out.push(`### ${textIds.get(text)}: ${[...new Set(users.map((u) => u.license))].join(", ")}`, "");
    out.push(
      `Applies to: ${users.map((u) => `${u.name} ${u.version} (${u.textSource || "no text"})`).join("; ")}.`,
      "",
    );
    const fence = "`".repeat(Math.max(3, ...[...text.matchAll(/`+/g)].map((m) => m[0].length + 1)));
    out.push(`${fence}text`, text || "(no licence text)", fence, "");
  }
  return `${out.join("\n").trimEnd()}\n`;
}
