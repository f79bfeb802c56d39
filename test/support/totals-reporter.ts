// Prints the plain totals line CI reads (`N passed, M failed[, K skipped]`),
// and writes it to $PROVKIT_TOTALS_FILE when set, so .ci/run can repeat it last.
import { writeFileSync } from 'node:fs';

import type { Reporter, TestModule, TestRunEndReason } from 'vitest/node';

export default class TotalsReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<unknown>,
    reason: TestRunEndReason,
  ): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      // A module that failed to load has no tests but must count as a failure.
      if (mod.state() === 'failed' && [...mod.children.allTests()].length === 0) failed += 1;
      for (const t of mod.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    failed += unhandledErrors.length;
    // A run that failed before any test (a globalSetup that refused, e.g. a
    // stale dist/: test/support/fresh-dist.ts) is not a green line.
    if (reason === 'failed' && failed === 0) failed = 1;
    const line = `${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`;
    process.stdout.write(`\n${line}\n`);
    const out = process.env['PROVKIT_TOTALS_FILE'];
    if (out) writeFileSync(out, `${line}\n`);
  }
}
