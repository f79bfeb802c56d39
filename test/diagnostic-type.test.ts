/**
 * One diagnostic type (src/errors.ts `Diagnostic`): what the parsers return
 * is what every command reports, with a code and the one range type, so a
 * library caller of parseLockFile, loadLockFile or the configuration loader
 * handles a single type.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, expectTypeOf, it } from 'vitest';

import { loadModuleRequirements } from '../src/config/index.js';
import { type Diagnostic, ErrorCode, WarningCode, rangeText } from '../src/errors.js';
import { loadLockFile, parseLockFile } from '../src/index.js';
import type { HclDiagnostic } from '../src/index.js';

describe('one diagnostic type for parsers and commands', () => {
  it('a lock file parse diagnostic is the root Diagnostic, coded INVALID_LOCK_FILE, with a complete range', () => {
    const { diagnostics } = parseLockFile(
      Buffer.from('provider "registry.terraform.io/hashicorp/null" {\n  version = 3\n  hashes = [\n'),
      '.terraform.lock.hcl',
      'terraform',
    );
    expectTypeOf(diagnostics).toEqualTypeOf<readonly Diagnostic[]>();
    expectTypeOf<HclDiagnostic>().toMatchTypeOf<Diagnostic>();
    expect(diagnostics.length).toBeGreaterThan(0);
    for (const d of diagnostics) {
      expect(d.code).toBe(d.severity === 'error' ? ErrorCode.INVALID_LOCK_FILE : WarningCode.LOCK_FILE_WARNING);
      expect(d.range?.filename).toBe('.terraform.lock.hcl');
      expect(d.range?.start?.line).toBeGreaterThan(0);
      expect(typeof d.range?.start?.byte).toBe('number');
      expect(typeof d.range?.end?.column).toBe('number');
    }
    expect(rangeText(diagnostics[0]!.range!)).toMatch(/^\.terraform\.lock\.hcl:\d+:\d+$/);
  });

  it('a lock file that cannot be read is a diagnostic about the file as a whole: a range with no start', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'provkit-diag-'));
    try {
      // A directory where the file should be: readable as a name, not as a file.
      const { diagnostics } = await loadLockFile(dir, 'terraform', '.terraform.lock.hcl');
      expect(diagnostics).toHaveLength(1);
      expect(diagnostics[0]).toMatchObject({
        severity: 'error',
        summary: 'Failed to read file',
        code: ErrorCode.INVALID_LOCK_FILE,
        range: { filename: '.terraform.lock.hcl' },
      });
      expect(diagnostics[0]!.range!.start).toBeUndefined();
      expect(rangeText(diagnostics[0]!.range!)).toBe('.terraform.lock.hcl');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a configuration diagnostic is the root Diagnostic, coded INVALID_CONFIGURATION', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'provkit-diag-'));
    try {
      const { writeFile } = await import('node:fs/promises');
      await writeFile(
        join(dir, 'main.tf'),
        'terraform {\n  required_providers {\n    null = 3\n  }\n}\nresource "x" {\n',
      );
      const config = await loadModuleRequirements(dir, { flavor: 'terraform' });
      expectTypeOf(config.diagnostics).items.toMatchTypeOf<Diagnostic>();
      const errors = config.diagnostics.filter((d) => d.severity === 'error');
      expect(errors.length).toBeGreaterThan(0);
      for (const d of errors) expect(d.code).toBe(ErrorCode.INVALID_CONFIGURATION);
      expect(errors.some((d) => d.range?.filename === 'main.tf' && (d.range.start?.line ?? 0) > 0)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
