import { defineConfig } from 'vitest/config';

/**
 * The end-to-end set (`npm run test:e2e`, the vitest project `e2e`): every
 * test file that runs `bin/provkit.js` or any other child process, forks a
 * server host, or starts a server or a socket, even on loopback and in its own
 * process. Everything else under test/ is the unit set (`npm run test:unit`,
 * the project `unit`): pure code in the test's own process, worker threads
 * allowed (the hash pool). CONTRIBUTING.md "How we test" states the rule;
 * test/docs/test-projects.test.ts checks it both ways (a unit file that may
 * cross a process or a socket, an end-to-end file that cannot), and
 * test/support/unit-guard.ts stops a unit test that spawns or listens anyway.
 *
 * Two forms only, so that the check can read them: `DIR/**` (every test file
 * under DIR) or one file's path.
 */
export const E2E_FILES: readonly string[] = [
  'test/e2e/**',
  'test/faults/**',
  'test/serve/**',
  'test/package/**',
  'test/bench/node-floor.test.ts',
  'test/bench/receive.test.ts',
  'test/bench/tiny-floor.test.ts',
  'test/bench/wan-proxy.test.ts',
  'test/cli/bundle.test.ts',
  'test/cli/hash-store.test.ts',
  'test/cli/hash.test.ts',
  'test/cli/install.test.ts',
  'test/cli/lock-all-platforms.test.ts',
  'test/cli/lock-registry.test.ts',
  'test/cli/lock.test.ts',
  'test/cli/mirror.test.ts',
  'test/cli/serve.test.ts',
  'test/cli/verify.test.ts',
  'test/docs/api-report.test.ts',
  'test/errors.test.ts',
  'test/fs/dir-mutex.test.ts',
  'test/fs/read.test.ts',
  'test/fs/temp-name.test.ts',
  'test/hashing/crc32.test.ts',
  'test/hashing/memory.test.ts',
  'test/net/client.test.ts',
  'test/net/warm.test.ts',
  'test/sources/fetch-identity.test.ts',
  'test/sources/multi.test.ts',
  'test/sources/net-mirror.test.ts',
  'test/sources/ready-registry.test.ts',
  'test/sources/registry.test.ts',
  'test/support/zip-writer.test.ts',
  'test/ui/help.test.ts',
];

/** Every test file. */
export const ALL_TESTS = 'test/**/*.test.ts';

/** `DIR/**` as a vitest glob of its test files. */
const glob = (p: string): string => (p.endsWith('/**') ? `${p}/*.test.ts` : p);

export default defineConfig({
  test: {
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
    // second file overlaps them (CI on 2 cores: 13 min 42 s with one). The
    // two projects share these workers.
    maxWorkers: 2,
    reporters: ['default', './test/support/totals-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [ALL_TESTS],
          exclude: E2E_FILES.map(glob),
          setupFiles: ['./test/support/unit-guard.ts'],
          // The unit files of one worker share their modules (not re-imported
          // per file): `npm run test:unit` took 103 s of CPU isolated, 71 s
          // shared. A unit test leaves no global state behind
          // (CONTRIBUTING.md "How we test").
          isolate: false,
          // The hash pool's tests start the compiled worker (dist/hashing/worker.js).
          globalSetup: ['./test/support/fresh-dist.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E_FILES.map(glob),
          // bin/provkit.js runs dist/: refuse to test an old build.
          globalSetup: ['./test/support/fresh-dist.ts'],
        },
      },
    ],
  },
});
