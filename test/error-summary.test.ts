// The one Diagnostic of a failure a library caller meets: diagnosticFromError
// gives the error's own summary, else the summary of its code (ERROR_SUMMARY),
// never a bare "Error" (the CLI passes its own fallback where it prints one).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  createHashPool,
  diagnosticFromError,
  ERROR_SUMMARY,
  ErrorCode,
  FetchCache,
  FilesystemMirrorSource,
  Locks,
  parseConstraints,
  parsePlatform,
  parseProviderSource,
  ProvkitError,
  runLock,
  WarningCode,
} from '../src/index.js';

describe('diagnosticFromError', () => {
  it('summarises a runLock failure by its code: a provider an empty mirror does not have', async () => {
    const mirror = await mkdtemp(join(tmpdir(), 'provkit-summary-'));
    const pool = createHashPool({ concurrency: 0 });
    const cache = new FetchCache({ source: new FilesystemMirrorSource({ baseDir: mirror, flavor: 'tofu' }), pool });
    try {
      const outcome = await runLock({
        requirements: [{ provider: parseProviderSource('acme/demo', 'tofu'), constraints: parseConstraints('>= 1') }],
        platforms: [parsePlatform('linux_amd64')],
        cache,
        flavor: 'tofu',
        oldLocks: new Locks(),
      });
      const [failure] = outcome.failures;
      expect(failure?.error.summary).toBeUndefined();
      const d = diagnosticFromError(failure!.error);
      expect(d.code).toBe(ErrorCode.NOT_FOUND);
      expect(d.summary).toBe('Not found');
    } finally {
      await cache.close();
      await pool.close();
      await rm(mirror, { recursive: true, force: true });
    }
  });

  it('keeps an error’s own summary, then the caller’s fallback, then the code’s', () => {
    const own = new ProvkitError(ErrorCode.IO, 'x', { summary: 'Cannot write the mirror' });
    expect(diagnosticFromError(own, 'Fallback').summary).toBe('Cannot write the mirror');
    expect(diagnosticFromError(new ProvkitError(ErrorCode.IO, 'x'), 'Fallback').summary).toBe('Fallback');
    expect(diagnosticFromError(new ProvkitError(ErrorCode.IO, 'x')).summary).toBe('I/O error');
    expect(diagnosticFromError(new Error('boom'))).toMatchObject({ summary: 'Internal error', code: 'INTERNAL' });
  });

  it('has a summary for every code, none of them a bare "Error"', () => {
    for (const code of Object.values(ErrorCode)) {
      expect(ERROR_SUMMARY[code], code).toMatch(/^[A-Z]/);
      expect(ERROR_SUMMARY[code], code).not.toBe('Error');
    }
  });
});

describe('directory mutex codes', () => {
  it('say "mutex" ("lock" means the lock file only); the old lock names are aliases of the same values', () => {
    expect(ErrorCode.MUTEX_TIMEOUT).toBe('MUTEX_TIMEOUT');
    expect(WarningCode.MUTEX_WAIT).toBe('MUTEX_WAIT');
    expect(WarningCode.STALE_MUTEX_REMOVED).toBe('STALE_MUTEX_REMOVED');
    expect(ErrorCode.PACKAGE_LOCK_TIMEOUT).toBe(ErrorCode.MUTEX_TIMEOUT);
    expect(WarningCode.LOCK_WAIT).toBe(WarningCode.MUTEX_WAIT);
    expect(WarningCode.STALE_LOCK_REMOVED).toBe(WarningCode.STALE_MUTEX_REMOVED);
    expect(ERROR_SUMMARY[ErrorCode.MUTEX_TIMEOUT]).toBe('Timed out waiting for a directory mutex');
  });
});
