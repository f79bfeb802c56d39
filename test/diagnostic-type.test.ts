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
import { parseHCL, parseJSON } from '../src/hcl/index.js';
import type { Diagnostic as HclModuleDiagnostic } from '../src/hcl/index.js';
import { loadLockFile, lockModule, parseLockFile } from '../src/index.js';
import type { Diagnostic as RootDiagnostic, HclDiagnostic, LoadedLockFile, ModuleLockOutcome } from '../src/index.js';

describe('one diagnostic type for parsers and commands', () => {
  it('a lock file parse diagnostic is the root Diagnostic, coded INVALID_LOCK_FILE, with a complete range', () => {
    const { diagnostics } = parseLockFile(
      Buffer.from('provider "registry.terraform.io/hashicorp/null" {\n  version = 3\n  hashes = [\n'),
      '.terraform.lock.hcl',
      'terraform',
    );
    expectTypeOf(diagnostics).toEqualTypeOf<readonly Diagnostic[]>();
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

  it('every reader and run returns the very same Diagnostic type, not a subtype', () => {
    // Identity, not mere assignability: a caller's Diagnostic[] takes them all, and they take a caller's.
    expectTypeOf<RootDiagnostic>().toEqualTypeOf<Diagnostic>();
    expectTypeOf<HclDiagnostic>().toEqualTypeOf<Diagnostic>();
    expectTypeOf<HclModuleDiagnostic>().toEqualTypeOf<Diagnostic>();
    expectTypeOf<ReturnType<typeof parseHCL>['diagnostics']>().items.toEqualTypeOf<Diagnostic>();
    expectTypeOf<ReturnType<typeof parseJSON>['diagnostics']>().items.toEqualTypeOf<Diagnostic>();
    expectTypeOf<LoadedLockFile['diagnostics']>().toEqualTypeOf<readonly Diagnostic[]>();
    expectTypeOf(loadLockFile).returns.resolves.toEqualTypeOf<LoadedLockFile>();
    expectTypeOf<ModuleLockOutcome['diagnostics']>().toEqualTypeOf<readonly Diagnostic[]>();
    expectTypeOf<ModuleLockOutcome['selectionErrors']>().toEqualTypeOf<readonly Diagnostic[]>();
    expectTypeOf(lockModule).returns.resolves.toEqualTypeOf<ModuleLockOutcome>();
    expectTypeOf<Awaited<ReturnType<typeof loadModuleRequirements>>['diagnostics']>().items.toEqualTypeOf<Diagnostic>();

    // And at run time: an HCL or JSON syntax error carries the code and a complete range.
    const [native] = parseHCL('a = \n', 'main.tf').diagnostics;
    expect(native).toEqual({
      severity: 'error',
      code: ErrorCode.INVALID_CONFIGURATION,
      summary: 'Invalid expression',
      detail: 'Expected the start of an expression, but found an invalid expression token.',
      range: { filename: 'main.tf', start: { line: 1, column: 5, byte: 4 }, end: { line: 2, column: 1, byte: 5 } },
    });
    const [json] = parseJSON('{"a": ', 'main.tf.json').diagnostics;
    expect(json).toMatchObject({ code: ErrorCode.INVALID_CONFIGURATION, summary: 'Missing value' });
    expect(json?.range).toEqual({
      filename: 'main.tf.json',
      start: { line: 1, column: 7, byte: 6 },
      end: { line: 1, column: 7, byte: 6 },
    });
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
