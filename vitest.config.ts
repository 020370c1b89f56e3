import { defineConfig } from "vitest/config";

// One Node test run over every deliverable; the workerd suite has its own config in control-plane/.
export default defineConfig({
  test: {
    include: [
      "shared/**/*.test.ts",
      "control-plane/**/*.test.ts",
      "agent/**/*.test.ts",
      "screen-appliance/**/*.test.ts",
      "test/**/*.test.ts",
    ],
    exclude: ["**/node_modules/**", "control-plane/test/workers/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
