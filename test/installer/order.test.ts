/**
 * Issue 12 item 3: the orders that reach the output are byte-order or
 * version-order comparisons, never `localeCompare` (whose result depends on
 * the ICU data and locale of the machine, and which orders 1.10.0 before 1.9.0).
 */
import { describe, expect, it } from 'vitest';

import { newProviderAddress, parsePlatform, parseVersion } from '../../src/addresses/index.js';
import { compareProblems, type VerifyProblem } from '../../src/installer/verify.js';

const provider = newProviderAddress('registry.terraform.io', 'hashicorp', 'null');
const problem = (
  version: string | undefined,
  platform: string | undefined,
  code: VerifyProblem['code'],
): VerifyProblem => ({
  provider,
  version: version === undefined ? undefined : parseVersion(version),
  platform: platform === undefined ? undefined : parsePlatform(platform),
  code,
  message: '',
});
const key = (p: VerifyProblem): string =>
  [p.version?.toString() ?? '-', p.platform?.toString() ?? '-', p.code].join(' ');

describe('verify problems in a deterministic order', () => {
  it('orders versions by precedence, platforms and codes by bytes, absent ones first', () => {
    const problems = [
      problem('1.10.0', 'linux_amd64', 'LOCK_MISSING_H1'),
      problem('1.9.0', 'linux_amd64', 'LOCK_MISSING_H1'),
      problem('1.9.0', 'linux_amd64', 'INDEX_MISMATCH'),
      problem('1.9.0', 'darwin_arm64', 'LOCK_MISSING_H1'),
      problem('1.9.0-beta1', undefined, 'LOCK_MISSING_ZH'),
      problem(undefined, undefined, 'CONFIG_NOT_LOCKED'),
      // Upper case sorts before lower case by bytes (a locale puts "a" first).
      problem('1.9.0', 'linux_amd64', 'INDEX_INVALID'),
    ];
    expect(problems.sort(compareProblems).map(key)).toEqual([
      '- - CONFIG_NOT_LOCKED',
      '1.9.0-beta1 - LOCK_MISSING_ZH',
      '1.9.0 darwin_arm64 LOCK_MISSING_H1',
      '1.9.0 linux_amd64 INDEX_INVALID',
      '1.9.0 linux_amd64 INDEX_MISMATCH',
      '1.9.0 linux_amd64 LOCK_MISSING_H1',
      '1.10.0 linux_amd64 LOCK_MISSING_H1',
    ]);
  });
});
