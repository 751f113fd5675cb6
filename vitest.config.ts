import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep file-level parallelism modest so watcher and timeout tests keep their margins.
    maxWorkers: 2,
  },
});
