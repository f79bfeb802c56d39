// Loading a configuration directory: module calls through the module
// manifest, the reference's refusals, and the merged requirements. The
// multi-module fixture's expected constraints are those terraform 1.11.4
// wrote into the lock file (`providers lock -fs-mirror=mirror-fixtures`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { hasErrors, loadConfig, loadModuleRequirements } from '../../src/config/index.js';
import { parseLockFile } from '../../src/lockfile/index.js';
import { diagLines, FIXTURES, loadMem, memFs, reqLines } from './helpers.js';

const INIT = 'Run "terraform init" to install all modules required by this configuration.';

describe('the multi-module fixture, against terraform 1.11.4', () => {
  const dir = join(FIXTURES, 'multi-module');

  it('merges the constraints of every module exactly as terraform wrote them into the lock file', async () => {
    const r = await loadModuleRequirements(dir, { flavor: 'terraform' });
    const lock = parseLockFile(
      readFileSync(join(FIXTURES, 'multi-module.terraform-1.11.4.lock.hcl')),
      'lock',
      'terraform',
    );
    expect(lock.diagnostics).toEqual([]);
    const fromTerraform = lock.locks.all().map((l) => `${l.provider.toString()} ${l.constraints.toString()}`);
    expect(fromTerraform).toEqual([
      'registry.example.test/acme/demo >= 1.0.0, ~> 1.0, != 1.0.5, ~> 1.1',
      'registry.example.test/acme/tools >= 0.2.0, ~> 0.3.0',
    ]);
    expect(reqLines(r.requirements)).toEqual(fromTerraform);
    // The only diagnostic, as terraform prints it ("on modules/net/main.tf line 14").
    expect(diagLines(r.diagnostics)).toEqual([
      'warning modules/net/main.tf:14:13: Version constraints inside provider configuration blocks are deprecated',
    ]);
  });

  it("gives the module tree, with each module's own requirements; the built-in provider is left out of the total", async () => {
    const cfg = await loadConfig(dir, { flavor: 'terraform' });
    const walk = (n: NonNullable<typeof cfg.root>): string[] => [
      `${n.path.join('.') || '(root)'} @ ${n.dir}: ${reqLines(n.requirements).join(' | ')}`,
      ...n.children.flatMap(walk),
    ];
    expect(cfg.root && walk(cfg.root)).toEqual([
      '(root) @ .: registry.example.test/acme/demo ~> 1.0 | terraform.io/builtin/terraform',
      'net @ modules/net: registry.example.test/acme/demo >= 1.0.0, != 1.0.5 | registry.example.test/acme/tools >= 0.2.0',
      'net.inner @ modules/inner: registry.example.test/acme/tools ~> 0.3.0',
      'remote @ .terraform/modules/remote: registry.example.test/acme/demo >= 1.0.0, ~> 1.1',
    ]);
  });

  it('words diagnostics for OpenTofu and uses its default registry for short sources', async () => {
    const r = await loadModuleRequirements(dir, { flavor: 'tofu' });
    expect(reqLines(r.requirements)).toEqual([
      'registry.example.test/acme/demo >= 1.0.0, ~> 1.0, != 1.0.5, ~> 1.1',
      'registry.example.test/acme/tools >= 0.2.0, ~> 0.3.0',
    ]);
    expect(r.diagnostics[0]?.detail).toMatch(/^OpenTofu 0\.13 and earlier/);
  });

  it('reads the manifest from another data directory (TF_DATA_DIR)', async () => {
    const r = await loadModuleRequirements(dir, { flavor: 'terraform', dataDir: 'nowhere' });
    expect(diagLines(r.diagnostics).filter((l) => l.startsWith('error'))).toEqual([
      'error main.tf:14:1: Module not installed',
      'error main.tf:18:1: Module not installed',
    ]);
  });
});

describe('module calls', () => {
  const root =
    'terraform {\n  required_providers {\n    demo = { source = "acme/demo", version = "~> 1.0" }\n  }\n}\nmodule "child" {\n  source = "./child"\n}\n';
  const child =
    'terraform {\n  required_providers {\n    demo = { source = "acme/demo", version = ">= 1.0.0, != 1.0.5" }\n  }\n}\nresource "tools_x" "y" {}\n';

  it('refuses a module that is not in the manifest, even a local one (terraform 1.11.4)', async () => {
    const r = await loadMem({ 'main.tf': root, 'child/main.tf': child });
    expect(diagLines(r.diagnostics)).toEqual(['error main.tf:6:1: Module not installed']);
    expect(r.diagnostics[0]?.detail).toBe(`This module is not yet installed. ${INIT}`);
    expect(reqLines(r.requirements)).toEqual(['registry.terraform.io/acme/demo ~> 1.0']);
  });

  it('loads local modules without a manifest when asked to', async () => {
    const r = await loadMem({ 'main.tf': root, 'child/main.tf': child }, 'terraform', { resolveLocalModules: true });
    expect(r.diagnostics).toEqual([]);
    expect(reqLines(r.requirements)).toEqual([
      'registry.terraform.io/acme/demo >= 1.0.0, ~> 1.0, != 1.0.5',
      'registry.terraform.io/hashicorp/tools',
    ]);
    expect(r.root?.children[0]?.dir).toBe('child');
  });

  it('stops a local module that calls itself', async () => {
    const r = await loadMem({ 'main.tf': 'module "again" {\n  source = "./"\n}\n' }, 'terraform', {
      resolveLocalModules: true,
    });
    expect(r.diagnostics.map((d) => d.summary)).toEqual(['Module nesting too deep']);
  });

  const manifest = (records: object[]): string =>
    JSON.stringify({ Modules: [{ Key: '', Source: '', Dir: '.' }, ...records] });

  it('loads installed modules from their recorded directories', async () => {
    const r = await loadMem({
      'main.tf': root,
      'child/main.tf': child,
      '.terraform/modules/modules.json': manifest([{ Key: 'child', Source: './child/', Dir: 'child' }]),
    });
    // "./child/" and "./child" are the same local source once cleaned.
    expect(r.diagnostics).toEqual([]);
    expect(reqLines(r.requirements)).toEqual([
      'registry.terraform.io/acme/demo >= 1.0.0, ~> 1.0, != 1.0.5',
      'registry.terraform.io/hashicorp/tools',
    ]);
  });

  it('reports a changed source, a changed version and an unreadable cache directory as terraform 1.11.4 does', async () => {
    const r = await loadMem({
      'main.tf':
        'module "a" {\n  source = "./modules/a"\n}\nmodule "b" {\n  source  = "hashicorp/consul/aws"\n  version = "0.1.0"\n}\nmodule "c" {\n  source = "git::https://example.com/x.git"\n}\nmodule "d" {\n  source  = "hashicorp/vault/aws"\n  version = "~> 1.0"\n}\n',
      'modules/a/main.tf': 'resource "null_resource" "x" {}\n',
      '.terraform/modules/b/main.tf': 'resource "aws_x" "y" {}\n',
      '.terraform/modules/d/main.tf': '\n',
      '.terraform/modules/modules.json': manifest([
        { Key: 'a', Source: './modules/x', Dir: 'modules/a' },
        {
          Key: 'b',
          Source: 'registry.terraform.io/hashicorp/consul/aws',
          Version: '0.2.0',
          Dir: '.terraform/modules/b',
        },
        { Key: 'c', Source: 'git::https://example.com/x.git', Dir: '.terraform/modules/c' },
        { Key: 'd', Source: 'hashicorp/vault/aws', Dir: '.terraform/modules/d' },
      ]),
    });
    expect(r.diagnostics.map((d) => `${d.range?.start?.line}: ${d.summary}: ${d.detail}`)).toEqual([
      `2: Module source has changed: The source address was changed since this module was installed. ${INIT}`,
      `5: Module version requirements have changed: The version requirements have changed since this module was installed and the installed version (0.2.0) is no longer acceptable. ${INIT}`,
      `8: Module not installed: This module's local cache directory .terraform/modules/c could not be read. ${INIT}`,
      `12: Module version requirements have changed: The version requirements have changed since this module was installed and the installed version is no longer acceptable. ${INIT}`,
    ]);
    // The modules that loaded still contribute (for tools that want partial results).
    expect(reqLines(r.requirements)).toEqual([
      'registry.terraform.io/hashicorp/aws',
      'registry.terraform.io/hashicorp/null',
    ]);
  });

  it('does not walk the module calls of a root module with errors', async () => {
    const r = await loadMem({ 'main.tf': 'module "a" {\n  source = "./a"\n}\nfoo = 1\n' });
    expect(diagLines(r.diagnostics)).toEqual(['error main.tf:4:1: Unsupported argument']);
  });

  it('warns about a backend in a child module', async () => {
    const r = await loadMem(
      { 'main.tf': 'module "a" {\n  source = "./a"\n}\n', 'a/main.tf': 'terraform {\n  backend "local" {}\n}\n' },
      'terraform',
      { resolveLocalModules: true },
    );
    expect(diagLines(r.diagnostics)).toEqual(['warning a/main.tf:2:3: Backend configuration ignored']);
    expect(hasErrors(r.diagnostics)).toBe(false);
  });
});

describe('the module manifest', () => {
  it.each([
    [
      '{"Modules":[{"Key":"a","Source":"./m","Dir":"m"},]}',
      'failed to read module manifest: error unmarshalling snapshot: Trailing comma in array',
    ],
    [
      '{"Modules":[{"Key":"a","Source":"./m","Dir":"m"},{"Key":"a","Source":"./m","Dir":"m"}]}',
      'failed to read module manifest: snapshot file contains two records for path a',
    ],
    [
      '{"Modules":[{"Key":"a","Source":"./m","Dir":"m","Version":"x.y"}]}',
      'failed to read module manifest: invalid version "x.y" for a: Malformed version: x.y',
    ],
  ])('refuses %s', async (text, summary) => {
    // terraform 1.11.4 prints the same summaries; after "error unmarshalling
    // snapshot:" its text is Go's encoding/json error, here the JSON reader's.
    const r = await loadMem({
      'main.tf': 'module "a" {\n  source = "./m"\n}\n',
      'm/main.tf': '\n',
      '.terraform/modules/modules.json': text,
    });
    expect(r.diagnostics.map((d) => d.summary)).toEqual([summary, 'Module not installed']);
  });

  it('matches field names case-insensitively and tolerates an empty file', async () => {
    const ok = await loadMem({
      'main.tf': 'module "a" {\n  source = "./m"\n}\n',
      'm/main.tf': '\n',
      '.terraform/modules/modules.json': '{"modules":[{"key":"a","source":"./m","dir":"m"}]}',
    });
    expect(ok.diagnostics).toEqual([]);
    const empty = await loadMem({ 'main.tf': '\n', '.terraform/modules/modules.json': '' });
    expect(empty.diagnostics).toEqual([]);
  });
});

describe('directories and files', () => {
  it('reports an unreadable root directory', async () => {
    const r = await loadConfig('missing', { flavor: 'terraform', fs: memFs({}) });
    expect(r.root).toBeUndefined();
    expect(r.diagnostics.map((d) => [d.summary, d.detail])).toEqual([
      ['Failed to read module directory', 'Module directory missing does not exist or cannot be read.'],
    ]);
  });

  it('prefers .tofu files for OpenTofu', async () => {
    const files = {
      'main.tf': 'terraform {\n  required_providers {\n    a = { source = "x/a", version = "1.0.0" }\n  }\n}\n',
      'main.tofu': 'terraform {\n  required_providers {\n    a = { source = "x/a", version = "2.0.0" }\n  }\n}\n',
    };
    expect(reqLines((await loadMem(files, 'tofu')).requirements)).toEqual(['registry.opentofu.org/x/a 2.0.0']);
    expect(reqLines((await loadMem(files, 'terraform')).requirements)).toEqual(['registry.terraform.io/x/a 1.0.0']);
  });

  it('leaves out legacy providers, as terraform 1.11.4 providers lock does', async () => {
    const r = await loadMem({
      'main.tf':
        'terraform {\n  required_providers {\n    foo  = { source = "-/foo" }\n    demo = { source = "registry.example.test/acme/demo" }\n  }\n}\n',
    });
    expect(r.diagnostics).toEqual([]);
    expect(reqLines(r.requirements)).toEqual(['registry.example.test/acme/demo']);
  });

  it('leaves out the built-in terraform provider', async () => {
    const r = await loadMem({
      'main.tf':
        'data "terraform_remote_state" "s" {}\nresource "terraform_data" "d" {}\nresource "null_resource" "n" {}\n',
    });
    expect(reqLines(r.requirements)).toEqual(['registry.terraform.io/hashicorp/null']);
  });

  it('sorts the requirements by host, namespace and type', async () => {
    const r = await loadMem({
      'main.tf':
        'resource "zeta_x" "a" {}\nresource "alpha_x" "b" {}\nterraform {\n  required_providers {\n    c = { source = "a.example/n/c" }\n  }\n}\n',
    });
    expect(reqLines(r.requirements)).toEqual([
      'a.example/n/c',
      'registry.terraform.io/hashicorp/alpha',
      'registry.terraform.io/hashicorp/zeta',
    ]);
  });
});
