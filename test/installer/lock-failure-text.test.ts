// The "Could not retrieve providers for locking" detail (installer/lock.ts
// lockFailureDiagnostics) as terraform 1.11.4 words it. Observed 2026-11-26,
// `terraform providers lock -no-color -fs-mirror=DIR -platform=linux_amd64`
// with providers the mirror does not have and no version constraint: the
// provider's "…the given constraints " keeps its trailing space except on
// the last line, which InstallerError.Error()'s strings.TrimSpace removes.
import { describe, expect, it } from 'vitest';

import { parsePlatform, parseProviderSource } from '../../src/addresses/index.js';
import { ErrorCode, ProvkitError } from '../../src/errors.js';
import { lockFailureDiagnostics } from '../../src/installer/lock.js';

const PLATFORM = parsePlatform('linux_amd64');
const failure = (type: string, constraints: string) => ({
  provider: parseProviderSource(`registry.example.test/acme/${type}`, 'terraform'),
  platform: PLATFORM,
  error: new ProvkitError(ErrorCode.NOT_FOUND, `no available releases match the given constraints ${constraints}`),
});
const HEAD =
  'Terraform failed to fetch the requested providers for linux_amd64 in order to calculate their checksums: some providers could not be installed:\n';

describe('lockFailureDiagnostics', () => {
  it('one provider with no constraints: "constraints." (the trailing space trimmed)', () => {
    const [d] = lockFailureDiagnostics([failure('other', '')], [PLATFORM], 'terraform');
    expect(d?.detail).toBe(
      `${HEAD}- registry.example.test/acme/other: no available releases match the given constraints.`,
    );
  });

  it('two: the first line keeps its trailing space, the last does not', () => {
    const [d] = lockFailureDiagnostics([failure('third', ''), failure('other', '')], [PLATFORM], 'terraform');
    expect(d?.detail).toBe(
      `${HEAD}- registry.example.test/acme/other: no available releases match the given constraints \n` +
        '- registry.example.test/acme/third: no available releases match the given constraints.',
    );
  });

  it('with constraints: as they are, then the period', () => {
    const [d] = lockFailureDiagnostics([failure('other', '>= 9.0.0')], [PLATFORM], 'terraform');
    expect(d?.detail).toBe(
      `${HEAD}- registry.example.test/acme/other: no available releases match the given constraints >= 9.0.0.`,
    );
  });
});
