import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI tests spawn bin/rein.js, which runs the compiled dist/cli.js: rebuild it first.
    globalSetup: ['test/support/build-dist.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
