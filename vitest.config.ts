import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The MCP conformance suite runs apart (`npm run conformance`): it needs Node >= 22.
    exclude: ['test/conformance/**', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep file-level parallelism modest so watcher and timeout tests keep their margins.
    maxWorkers: 2,
  },
});
