import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['./test/support/setup-env.ts'],
    restoreMocks: true,
    // Hang guards, not speed limits: a loaded CI machine (2 cores, the fault
    // matrix's child processes) made the 30 s guard fire on the largest
    // conformance package (many-entries) while nothing was stuck.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default', './test/support/totals-reporter.ts'],
  },
});
