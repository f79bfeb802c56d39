// Issue 15: root discovery (src/config/roots.ts) and the platform policy
// file (src/config/policy.ts), in memory. The end-to-end tests are in
// test/e2e/lock-recursive.test.ts.
import { describe, expect, it } from 'vitest';

import { discoverRoots, parsePolicyFile } from '../../src/config/index.js';
import { diagLines, memFs } from './helpers.js';

const tf = (body = ''): string => `terraform {\n  required_providers {\n  }\n}\n${body}`;
const call = (name: string, source: string): string => `module "${name}" {\n  source = "${source}"\n}\n`;

describe('discoverRoots', () => {
  it('roots are directories with configuration files that no other directory calls locally', async () => {
    const fs = memFs({
      'main.tf': tf(),
      'a/main.tf': tf(call('m', '../mods/m')),
      'a/b/main.tf': tf(),
      'mods/m/main.tf': tf(call('n', './n') + call('gone', '../../../outside')),
      'mods/m/n/main.tf': tf(),
      'mods/over/main.tf': tf(call('x', './one')),
      'mods/over/override.tf': call('x', './two'),
      'mods/over/one/main.tf': tf(),
      'mods/over/two/main.tf': tf(),
      'reg/main.tf': tf('module "r" {\n  source  = "acme/r/x"\n  version = "1.0.0"\n}\n'),
      'docs/README.md': 'no configuration here',
      '.git/x.tf': tf(),
      'c/.terraform/modules/r/main.tf': tf(),
      'c/main.tf.json': '{}',
      'self/main.tf': tf(call('me', './')),
      'tested/main.tf': tf(),
      'tested/tests/t.tftest.hcl': 'run "r" {\n  module {\n    source = "../helper"\n  }\n}\n',
      'helper/main.tf': tf(),
      'policy/provkit.hcl': 'platforms = ["linux_amd64"]\n',
    });
    const r = await discoverRoots('.', { flavor: 'terraform', fs });
    // mods/over/one is replaced by the override file's ./two; self calls itself.
    expect(r.roots).toEqual(['.', 'a', 'a/b', 'c', 'mods/over', 'mods/over/one', 'reg', 'tested']);
    expect(r.moduleDirs).toContain('mods/m');
    expect(r.policyFiles).toEqual(['policy/provkit.hcl']);
    expect(r.diagnostics).toEqual([]);
  });

  it('.tofu files count for OpenTofu only', async () => {
    const fs = memFs({ 'a/main.tofu': tf(), 'b/main.tf': tf() });
    expect((await discoverRoots('.', { flavor: 'tofu', fs })).roots).toEqual(['a', 'b']);
    expect((await discoverRoots('.', { flavor: 'terraform', fs })).roots).toEqual(['b']);
  });
});

describe('provkit.hcl', () => {
  it('platforms in order, duplicates dropped', () => {
    const r = parsePolicyFile(
      '# team policy\nplatforms = ["linux_amd64", "darwin_arm64", "linux_amd64"]\n',
      'provkit.hcl',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.policy?.platforms.map(String)).toEqual(['linux_amd64', 'darwin_arm64']);
  });

  it.each([
    ['platforms = ["linux_amd64"]\nplatform = "x"\n', ['error provkit.hcl:2:1: Unsupported argument']],
    ['platforms = ["linux_amd64"]\nextra {\n}\n', ['error provkit.hcl:2:1: Unsupported block type']],
    ['# nothing\n', ['error provkit.hcl:1:10: Missing required argument']],
    ['platforms = "linux_amd64"\n', ['error provkit.hcl:1:14: Invalid expression']],
    ['platforms = []\n', ['error provkit.hcl:1:1: No platforms']],
    ['platforms = ["linux_amd64", "darwin"]\n', ['error provkit.hcl:1:29: Invalid target platform']],
    ['platforms = ["linux_amd64", 3]\n', []],
    ['platforms = [var.x]\n', ['error provkit.hcl:1:14: Variables not allowed']],
    ['platforms = [\n', ['error provkit.hcl:2:1: Missing expression']],
  ])('%j is refused where it goes wrong', (text, expected) => {
    const r = parsePolicyFile(text, 'provkit.hcl');
    if (expected.length === 0) {
      // A number converts to a string, which is not a platform.
      expect(diagLines(r.diagnostics)).toEqual(['error provkit.hcl:1:29: Invalid target platform']);
    } else {
      expect(diagLines(r.diagnostics).slice(0, 1)).toEqual(expected);
    }
    expect(r.policy).toBeUndefined();
  });
});
