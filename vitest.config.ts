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
    // Two test files at once even on a 2-core machine (vitest's default is
    // one there): the end-to-end files mostly wait on child processes, so a
    // second file overlaps them (CI on 2 cores: 13 min 42 s with one).
    maxWorkers: 2,
    reporters: ['default', './test/support/totals-reporter.ts'],
  },
});
