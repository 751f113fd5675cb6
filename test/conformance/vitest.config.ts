import { defineConfig } from 'vitest/config';

// `npm run conformance`: the official MCP conformance suite, apart from `npm test` (it needs Node >= 22).
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    // Three full runs of the suite (about 10 s each here) plus the service's start.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    maxWorkers: 1,
  },
});
