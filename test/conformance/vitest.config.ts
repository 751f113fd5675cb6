import { defineConfig } from 'vitest/config';

// `npm run conformance`: the official MCP conformance suite, apart from `npm test` (it needs Node >= 22).
export default defineConfig({
  test: {
    include: ['test/conformance/**/*.test.ts'],
    // Six runs of the suite (two revisions, three ways), each a few minutes at most on 2 cores.
    testTimeout: 900_000,
    hookTimeout: 900_000,
    maxWorkers: 1,
  },
});
