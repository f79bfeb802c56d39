// Issue 11 #8: test files (`*.tftest.hcl`, and for OpenTofu `*.tofutest.hcl`)
// and the modules of their run blocks, loaded as `init` loads them
// (LoadConfigWithTests). The module keys and the terraform behaviours are the
// ones terraform 1.11.4 showed (test/fixtures/reference-runs/); the OpenTofu
// ones follow opentofu/opentofu v1.12 internal/configs (test_file.go,
// parser_config_dir.go, config.go).
import { describe, expect, it } from 'vitest';

import type { Flavor } from '../../src/addresses/index.js';
import { type ConfigFs, loadConfig, parseTestFile, testFileNames, testModulePath } from '../../src/config/index.js';
import { diagLines, memFs, reqLines } from './helpers.js';

const DEMO =
  'terraform {\n  required_providers {\n    demo = { source = "registry.example.test/acme/demo", version = "~> 1.0" }\n  }\n}\n';
const TOOLS =
  'terraform {\n  required_providers {\n    tools = { source = "registry.example.test/acme/tools", version = ">= 0.3" }\n  }\n}\n';
const RUN_M = 'run "a" {\n  module {\n    source = "./modules/m"\n  }\n}\n';
const manifest = (records: Record<string, string>): string =>
  JSON.stringify({
    Modules: [
      { Key: '', Source: '', Dir: '.' },
      ...Object.entries(records).map(([Key, Dir]) => ({ Key, Source: `./${Dir}`, Dir })),
    ],
  });

/** Loads an in-memory configuration; `testDirectory` null: test files not asked for (providers lock). */
function load(
  files: Record<string, string>,
  flavor: Flavor = 'terraform',
  testDirectory: string | null = 'tests',
  fs = memFs(files),
) {
  return loadConfig('.', { flavor, fs, ...(testDirectory === null ? {} : { testDirectory }) });
}

describe('modules of test-file run blocks', () => {
  it("adds the requirements of a run block's module (key test.tests.x.a), only when test files are asked for", async () => {
    const files = {
      'main.tf': DEMO,
      'modules/m/main.tf': TOOLS,
      'tests/x.tftest.hcl': RUN_M,
      '.terraform/modules/modules.json': manifest({ 'test.tests.x.a': 'modules/m' }),
    };
    const withTests = await load(files);
    expect(withTests.diagnostics).toEqual([]);
    expect(reqLines(withTests.requirements)).toEqual([
      'registry.example.test/acme/demo ~> 1.0',
      'registry.example.test/acme/tools >= 0.3.0',
    ]);
    expect(withTests.tests.map((t) => `${t.path.join('.')} @ ${t.dir}`)).toEqual(['test.tests.x.a @ modules/m']);
    // providers lock: no test files (confirmed with terraform 1.11.4).
    const without = await load(files, 'terraform', null);
    expect(reqLines(without.requirements)).toEqual(['registry.example.test/acme/demo ~> 1.0']);
    expect(without.tests).toEqual([]);
  });

  it("merges the run module's constraints with the root's (a conflict is left to version selection)", async () => {
    const r = await load({
      'main.tf': DEMO,
      'modules/m/main.tf':
        'terraform {\n  required_providers {\n    demo = { source = "registry.example.test/acme/demo", version = "< 1.1.0" }\n  }\n}\n',
      'tests/x.tftest.hcl': RUN_M,
      '.terraform/modules/modules.json': manifest({ 'test.tests.x.a': 'modules/m' }),
    });
    expect(reqLines(r.requirements)).toEqual(['registry.example.test/acme/demo ~> 1.0, < 1.1.0']);
  });

  it("walks a run module's own calls, and names modules of root-directory and JSON test files as terraform does", async () => {
    const r = await load({
      'main.tf': DEMO,
      'modules/m/main.tf': 'module "n" {\n  source = "../n"\n}\n',
      'modules/n/main.tf': TOOLS,
      'root.tftest.hcl': 'run "r" {\n  module {\n    source = "./modules/m"\n  }\n}\n',
      'tests/j.tftest.json': '{"run": {"j1": {"module": {"source": "./modules/n"}}}}',
      '.terraform/modules/modules.json': JSON.stringify({
        Modules: [
          { Key: 'test.root.r', Source: './modules/m', Dir: 'modules/m' },
          { Key: 'test.root.r.n', Source: '../n', Dir: 'modules/n' },
          { Key: 'test.tests.j.tftest.json.j1', Source: './modules/n', Dir: 'modules/n' },
        ],
      }),
    });
    expect(r.diagnostics).toEqual([]);
    expect(r.tests.map((t) => t.path.join('.'))).toEqual(['test.root.r', 'test.tests.j.tftest.json.j1']);
    expect(r.tests[0]?.children.map((c) => c.path.join('.'))).toEqual(['test.root.r.n']);
    expect(reqLines(r.requirements)).toEqual([
      'registry.example.test/acme/demo ~> 1.0',
      'registry.example.test/acme/tools >= 0.3.0',
    ]);
  });

  it('needs the module installed, as any module call ("Module not installed" at the module block)', async () => {
    const r = await load({ 'main.tf': DEMO, 'modules/m/main.tf': TOOLS, 'tests/x.tftest.hcl': RUN_M });
    expect(diagLines(r.diagnostics)).toEqual(['error tests/x.tftest.hcl:2:3: Module not installed']);
  });

  it('Terraform: ignores test-file provider blocks and .tofutest files; OpenTofu: requires those providers and reads .tofutest files', async () => {
    const files = {
      'main.tf': DEMO,
      'modules/m/main.tf': TOOLS,
      'tests/x.tftest.hcl': 'provider "extra" {}\nrun "a" {}\n',
      'tests/y.tofutest.hcl': 'run "b" {\n  module {\n    source = "./modules/m"\n  }\n}\n',
      '.terraform/modules/modules.json': manifest({ 'test.tests.y.tofutest.hcl.b': 'modules/m' }),
    };
    const tf = await load(files, 'terraform');
    expect(tf.diagnostics).toEqual([]);
    expect(reqLines(tf.requirements)).toEqual(['registry.example.test/acme/demo ~> 1.0']);
    const tofu = await load(files, 'tofu');
    expect(tofu.diagnostics).toEqual([]);
    // Only `.tftest.hcl` is cut from the key, so the .tofutest.hcl file's module is `test.tests.y.tofutest.hcl.b`.
    expect(tofu.tests.map((t) => t.path.join('.'))).toEqual(['test.tests.y.tofutest.hcl.b']);
    expect(reqLines(tofu.requirements)).toEqual([
      'registry.example.test/acme/demo ~> 1.0',
      'registry.example.test/acme/tools >= 0.3.0',
      'registry.opentofu.org/hashicorp/extra',
    ]);
  });

  it('OpenTofu: x.tofutest.hcl hides x.tftest.hcl', () => {
    const entries = [
      'b.tftest.hcl',
      'a.tofutest.hcl',
      'a.tftest.hcl',
      'c.tftest.json',
      'c.tofutest.json',
      'main.tf',
      '.h.tftest.hcl',
      'd.tftest.hcl~',
    ].map((name) => ({
      name,
      isDirectory: false,
    }));
    expect(testFileNames(entries, 'tofu')).toEqual(['a.tofutest.hcl', 'b.tftest.hcl', 'c.tofutest.json']);
    expect(testFileNames(entries, 'terraform')).toEqual(['a.tftest.hcl', 'b.tftest.hcl', 'c.tftest.json']);
  });

  it('names module paths test.<dirs>.<base>.<run>', () => {
    expect(testModulePath('main.tftest.hcl', 'setup')).toEqual(['test', 'main', 'setup']);
    expect(testModulePath('tests/main.tftest.hcl', 'setup')).toEqual(['test', 'tests', 'main', 'setup']);
    expect(testModulePath('tests/j.tftest.json', 'j1')).toEqual(['test', 'tests', 'j.tftest.json', 'j1']);
  });

  it('warns about a missing test directory other than the default, and refuses an unreadable one', async () => {
    expect((await load({ 'main.tf': DEMO }, 'terraform', 'tests')).diagnostics).toEqual([]);
    const missing = await load({ 'main.tf': DEMO }, 'terraform', 'other');
    expect(missing.diagnostics.map((d) => [d.severity, d.summary, d.detail])).toEqual([
      ['warning', 'Test directory does not exist', 'Requested test directory other does not exist.'],
    ]);
    const mem = memFs({ 'main.tf': DEMO }, ['other']);
    const denied: ConfigFs = {
      readDir: (path) =>
        path === 'other'
          ? Promise.reject(Object.assign(new Error("EACCES: permission denied, scandir 'other'"), { code: 'EACCES' }))
          : mem.readDir(path),
      readFile: (path) => mem.readFile(path),
    };
    const notDir = await load({}, 'terraform', 'other', denied);
    expect(notDir.diagnostics.map((d) => [d.summary, d.detail])).toEqual([
      [
        'Failed to read test directory',
        // The system's reason in words (src/errors.ts errorText), never Node's `EACCES: …`.
        'Test directory other could not be read: permission denied.',
      ],
    ]);
    expect(notDir.root).toBeUndefined();
  });
});

describe('test-file diagnostics', () => {
  const diags = (text: string, flavor: Flavor = 'terraform', name = 'tests/t.tftest.hcl'): string[] =>
    parseTestFile(text, name, flavor).diagnostics.map(
      (d) => `${d.severity} ${d.range?.start?.line}:${d.range?.start?.column} ${d.summary}: ${d.detail}`,
    );

  it('reports what terraform 1.11.4 reported for a bad test file (test/fixtures/reference-runs/test-files-invalid)', () => {
    const text =
      'run "a" {\n  module {\n    version = "1.0.0"\n  }\n  bogus = 1\n}\nwat {}\nrun "b" {\n  module {\n    source = "git::https://example.com/x.git"\n  }\n}\n';
    expect(diags(text).sort()).toEqual(
      [
        'error 2:3 Missing "source" attribute for module block: You must specify a source attribute when executing alternate modules during test executions.',
        'error 5:3 Unsupported argument: An argument named "bogus" is not expected here.',
        'error 7:1 Unsupported block type: Blocks of type "wat" are not expected here.',
        'error 10:5 Invalid module source address: Only local or registry module sources are currently supported from within test run blocks.',
      ].sort(),
    );
    // OpenTofu 1.12 runs remote modules from test files.
    expect(diags(text, 'tofu').some((d) => d.includes('Only local or registry'))).toBe(false);
  });

  it('checks run names, repeated blocks and provider versions per flavor', () => {
    const text =
      'run "a" {\n  module {\n    source = "./m"\n  }\n  module {\n    source = "./n"\n  }\n}\nrun "a" {}\nrun "1x" {}\nprovider "p" {\n  version = "1.0"\n}\nprovider "p" {}\n';
    expect(diags(text)).toEqual([
      'error 5:3 Multiple "module" blocks: This run block already has a module block defined at tests/t.tftest.hcl:2,3-9.',
      'error 9:1 Duplicate "run" block names: This test file already has a run named a block defined at tests/t.tftest.hcl:1,1-8.',
      'error 10:5 Invalid run block name: A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.',
      'error 12:13 Version constraints are not allowed in test files: Version constraints inside provider configuration blocks are not allowed in test files. To silence this error, move the provider version constraint into the required_providers block of the configuration that uses this provider.',
      'error 14:1 Duplicate provider block: A provider for p is already defined at tests/t.tftest.hcl:11,10-13.',
    ]);
    expect(diags(text, 'tofu').map((d) => d.split(':')[0])).toEqual(['error 5', 'error 10', 'warning 12']);
  });
});
