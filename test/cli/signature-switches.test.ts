// OpenTofu's signature switches are read once, at the CLI's edge
// (src/cli/resources.ts RunResources.signatures), and reach the library as
// data: the sources' context carries them, and nothing under src/ but the
// one reader names the variables as an environment lookup.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { CliIO, GlobalOptions } from '../../src/cli/io.js';
import { RunResources } from '../../src/cli/resources.js';
import { signaturePolicy, signatureSwitchesFromEnv } from '../../src/sources/index.js';

/** Every .ts file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('OpenTofu signature switches', () => {
  it('count only when exactly "true", as OpenTofu reads them; Terraform enforces both always', () => {
    expect(signatureSwitchesFromEnv({ OPENTOFU_ENFORCE_GPG_VALIDATION: 'true' })).toEqual({
      enforceValidation: true,
      enforceExpiration: false,
    });
    expect(
      signatureSwitchesFromEnv({ OPENTOFU_ENFORCE_GPG_VALIDATION: '1', OPENTOFU_ENFORCE_GPG_EXPIRATION: 'TRUE' }),
    ).toEqual({
      enforceValidation: false,
      enforceExpiration: false,
    });
    expect(signaturePolicy('tofu', { enforceExpiration: true })).toEqual({
      flavor: 'tofu',
      enforceValidation: false,
      enforceExpiration: true,
    });
    expect(signaturePolicy('terraform')).toEqual({
      flavor: 'terraform',
      enforceValidation: true,
      enforceExpiration: true,
    });
  });

  it('are read from the environment once per run and handed to the sources as data', () => {
    const reads: string[] = [];
    const vars: Record<string, string | undefined> = { OPENTOFU_ENFORCE_GPG_VALIDATION: 'true' };
    const env = new Proxy(vars, {
      get(target, name) {
        if (typeof name === 'string' && name.startsWith('OPENTOFU_ENFORCE_GPG_')) reads.push(name);
        return typeof name === 'string' ? target[name] : undefined;
      },
    });
    const io: CliIO = { stdout: { write: () => true }, stderr: { write: () => true }, env, cwd: '/' };
    const globals: GlobalOptions = { flavor: 'tofu', flavorIn: () => ({ flavor: 'tofu' }), cwd: '/', color: false };
    const r = new RunResources(io, globals);
    expect(r.signatures().enforceValidation).toBe(true);
    expect(r.signatures()).toBe(r.signatures());
    expect(r.sourceContext().signatures).toEqual({ enforceValidation: true, enforceExpiration: false });
    r.sourceContext('terraform');
    expect(reads.sort()).toEqual(['OPENTOFU_ENFORCE_GPG_EXPIRATION', 'OPENTOFU_ENFORCE_GPG_VALIDATION']);
    return r.close();
  });

  it('are named as an environment lookup in one place under src/', () => {
    const readers = sources('src').filter((f) =>
      /\[\s*['"]OPENTOFU_ENFORCE_GPG_(VALIDATION|EXPIRATION)['"]\s*\]/.test(readFileSync(f, 'utf8')),
    );
    expect(readers).toEqual([join('src', 'sources', 'registry', 'signature.ts')]);
  });
});
