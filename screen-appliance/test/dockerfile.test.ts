import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IMAGE_INSTALL, readLockfile, shippedPackages } from "../scripts/lib/notices/shipped-packages.ts";
import { NOTICES_FILE, NOTICES_IN_IMAGE } from "../scripts/lib/notices/third-party-notices.ts";

// There is no Docker engine in CI, so the image recipe is checked by reading it.
const root = join(import.meta.dirname, "../..");
const dockerfile = readFileSync(join(import.meta.dirname, "../Dockerfile"), "utf8");
const instructions = dockerfile.split("\n").filter((line) => line.trim() && !line.trim().startsWith("#"));

describe("screen-appliance/Dockerfile", () => {
  it("runs on an NVIDIA CUDA base image", () => {
    const bases = instructions.filter((l) => l.startsWith("FROM "));
    expect(bases.at(-1)).toMatch(/^FROM nvidia\/cuda:12\.\d+\.\d+-cudnn-runtime-/);
  });

  it("installs onnxruntime-node's CUDA files, overriding the repository's skip setting, and checks they arrived", () => {
    expect(readFileSync(join(root, ".npmrc"), "utf8")).toContain("onnxruntime-node-install=skip");
    expect(dockerfile).toContain(
      "ONNXRUNTIME_NODE_INSTALL=cuda12 node node_modules/onnxruntime-node/script/install.js",
    );
    expect(dockerfile).toContain("libonnxruntime_providers_cuda.so");
  });

  it("exposes 8080, reads the license from /etc/screen/screen.lic and starts the appliance", () => {
    expect(instructions).toContain("EXPOSE 8080");
    expect(dockerfile).toMatch(/SCREEN_LICENSE_PATH=\/etc\/screen\/screen\.lic/);
    expect(instructions.at(-1)).toBe('CMD ["node", "--import", "tsx", "screen-appliance/src/main.ts"]');
  });

  it("documents the run line with the GPU, port 80 and the mounted license", () => {
    expect(dockerfile).toMatch(/docker run --gpus all -p 80:8080 -v \S+:\/etc\/screen\/screen\.lic/);
  });

  it("copies only files that exist in the repository, and never the vendor keys", () => {
    const sources = instructions
      .filter((l) => l.startsWith("COPY ") && !l.includes("--from="))
      .flatMap((l) =>
        l
          .replace(/^COPY\s+/, "")
          .split(/\s+/)
          .slice(0, -1),
      );
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) expect(existsSync(join(root, source)), source).toBe(true);
    expect(dockerfile).not.toMatch(/COPY[^\n]*vendor-keys/);
  });

  it("installs production dependencies only, the install THIRD_PARTY_NOTICES.md is generated for", () => {
    expect(instructions.find((l) => l.includes("npm ci"))).toContain(`RUN ${IMAGE_INSTALL.command} `);
    const manifest = JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8"));
    expect(manifest.dependencies.tsx, "the CMD runs tsx, so --omit=dev must keep it").toBeDefined();
    expect(shippedPackages(readLockfile(root)).map((pkg) => pkg.name)).toContain("tsx");
  });

  it(`ships the third-party notice at ${NOTICES_IN_IMAGE} and Node's own LICENSE`, () => {
    expect(instructions).toContain(`COPY ${NOTICES_FILE} ${NOTICES_IN_IMAGE}`);
    expect(instructions).toContain("COPY --from=node /usr/local/LICENSE /usr/local/share/doc/node/LICENSE");
  });
});
