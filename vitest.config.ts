import { defineConfig } from "vitest/config";

// Test files share one devnet (started once in the global setup) and assert exact balance
// changes, so they run one file at a time.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "src/**/*.test.ts", "functions/**/*.test.ts", "scripts/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    setupFiles: ["test/support/after-file.ts"],
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ["default"],
  },
});
