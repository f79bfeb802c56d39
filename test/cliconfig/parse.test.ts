// Reading one CLI configuration file: HCL 1 style native syntax and JSON.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

import { type Diagnostic, rangeText } from '../../src/errors.js';
import { describe, expect, it } from 'vitest';

import { parseCliConfigFile } from '../../src/cliconfig/index.js';

const FIX = fileURLToPath(new URL('../fixtures/cliconfig/', import.meta.url));
const read = (name: string, flavor: 'tofu' | 'terraform' = 'terraform') =>
  parseCliConfigFile(readFileSync(join(FIX, name)), name, flavor);
const at = (d: Diagnostic): string => (d.range ? rangeText(d.range) : '');

describe('native syntax', () => {
  it('reads every setting of full.tfrc', () => {
    const { file, diagnostics } = read('full.tfrc');
    expect(diagnostics).toEqual([]);
    // HCL 1 keeps ${…} as written; the loader expands it later like os.ExpandEnv.
    expect(file.pluginCacheDir).toBe('${HOME}/.terraform.d/plugin-cache');
    expect(file.pluginCacheMayBreakDependencyLockFile).toBe(true);
    expect(file.hosts.map((h) => [h.name, h.services])).toEqual([
      ['Example.COM', { 'providers.v1': 'https://providers.example.com/v1/', 'modules.v1': '/modules/' }],
      ['registry.internal:8443', { 'providers.v1': 'https://registry.internal:8443/providers/' }],
    ]);
    expect(file.credentials.map((c) => [c.name, c.attributes.token])).toEqual([
      ['app.terraform.io', 'xxxxxx.atlasv1.zzzzzzzzzzzzz'],
      ['café.example', 'unicode-host'],
    ]);
    const pi = file.providerInstallations[0];
    expect(pi?.devOverrides.map((d) => [d.provider.toString(), d.dir])).toEqual([
      ['registry.terraform.io/hashicorp/null', '/home/dev/go/bin'],
    ]);
    expect(pi?.methods.map(({ range: _r, ...m }) => m)).toEqual([
      { kind: 'filesystem_mirror', path: '/usr/share/terraform/providers', include: ['example.com/*/*'], exclude: [] },
      {
        kind: 'network_mirror',
        url: 'https://mirror.example.net/providers/',
        include: ['registry.terraform.io/hashicorp/*', 'registry.opentofu.org/*/*'],
        exclude: ['registry.terraform.io/hashicorp/google-beta'],
        downloadRetryCount: 3,
      },
      { kind: 'direct', include: [], exclude: ['example.com/*/*'] },
    ]);
  });

  it('words provider_installation problems as terraform 1.11.4 does', () => {
    const { diagnostics } = read('problems.tfrc');
    expect(diagnostics.map((d) => `${at(d)} ${d.summary}: ${d.detail}`)).toEqual([
      'problems.tfrc:2:3 Invalid provider_installation method block: Invalid filesystem_mirror block at 1:1: "path" argument is required.',
      'problems.tfrc:5:3 Invalid provider_installation method block: Unknown provider installation method "bogus" at 5:3.',
    ]);
  });

  it('wants dev_overrides first: "at" for Terraform 1.11.4, "at at" (sic) for OpenTofu', () => {
    const text = 'provider_installation {\n  direct {}\n  dev_overrides {\n    "hashicorp/null" = "/x"\n  }\n}\n';
    expect(parseCliConfigFile(text, 'x.tfrc', 'terraform').diagnostics.map((d) => d.detail)).toEqual([
      'The dev_overrides block at 3:3 must appear before all other installation methods, because development overrides always have the highest priority.',
    ]);
    expect(parseCliConfigFile(text, 'x.tfrc', 'tofu').diagnostics.map((d) => d.detail)).toEqual([
      'The dev_overrides block at at 3:3 must appear before all other installation methods, because development overrides always have the highest priority.',
    ]);
  });

  it('refuses the attribute form, labels and non-block methods', () => {
    const r = parseCliConfigFile(
      'provider_installation = {}\nprovider_installation "x" {\n  direct = {}\n  direct "y" {}\n}\n',
      'x.tfrc',
      'terraform',
    );
    expect(r.diagnostics.map((d) => `${at(d)} ${d.detail}`)).toEqual([
      'x.tfrc:1:1 The provider_installation block at 1:1 must not be introduced with an equals sign.',
      'x.tfrc:2:1 The provider_installation block at 2:1 must not have any labels.',
      'x.tfrc:3:3 The items inside the provider_installation block at 2:1 must all be blocks.',
      'x.tfrc:4:3 The blocks inside the provider_installation block at 2:1 may not have any labels.',
    ]);
  });

  it('reports bad dev_overrides addresses, OCI mirror templates (checked as OpenTofu does), and oci_mirror for terraform', () => {
    const r = parseCliConfigFile(
      'provider_installation {\n  dev_overrides {\n    "a/b/c/d" = "/x"\n  }\n  oci_mirror {\n    repository_template = "x"\n  }\n}\n',
      'x.tfrc',
      'tofu',
    );
    expect(r.diagnostics.map((d) => d.summary)).toEqual([
      'Invalid provider installation dev overrides',
      'Invalid oci_mirror repository template',
      'Invalid oci_mirror repository template',
      'Invalid oci_mirror repository template',
    ]);
    expect(r.diagnostics[0]?.detail).toBe(
      'The entry "a/b/c/d" in 1:1 is not a valid provider source string.\n\nInvalid provider source string: The "source" attribute must be in the format "[hostname/][namespace/]name"',
    );
    expect(
      parseCliConfigFile('provider_installation {\n  oci_mirror {}\n}\n', 'x.tfrc', 'terraform').diagnostics[0]?.detail,
    ).toBe('Unknown provider installation method "oci_mirror" at 2:3.');
  });

  it('gives file:line:col for syntax errors', () => {
    const { diagnostics } = read('malformed.tfrc');
    expect(diagnostics.map((d) => `${at(d)} ${d.summary}`)).toEqual([
      'malformed.tfrc:1:32 Unclosed configuration block',
    ]);
  });

  it('accepts literal values only', () => {
    const r = parseCliConfigFile('plugin_cache_dir = var.x\n', 'x.tfrc', 'terraform');
    expect(r.diagnostics.map((d) => `${at(d)} ${d.summary}`)).toEqual(['x.tfrc:1:20 Unsupported expression']);
  });
});

describe('JSON syntax', () => {
  it('keeps the order of repeated method keys (as terraform 1.11.4 does)', () => {
    const { file, diagnostics } = read('mirrors.tfrc.json');
    expect(diagnostics).toEqual([]);
    expect(file.providerInstallations[0]?.methods.map((m) => `${m.kind} ${m.path ?? m.url ?? ''}`.trim())).toEqual([
      'filesystem_mirror /tmp/example1',
      'network_mirror https://tf-Mirror.example.com/',
      'filesystem_mirror /tmp/example2',
      'direct',
    ]);
    expect(file.providerInstallations[0]?.devOverrides.map((d) => d.dir)).toEqual(['/tmp/boop']);
    expect(file.credentials.map((c) => c.name)).toEqual(['App.Terraform.io']);
    expect(file.hosts.map((h) => h.services)).toEqual([{ 'providers.v1': 'https://example.com/p/' }]);
  });

  it('is lenient about commas like HCL 1, and reports other errors with file:line:col', () => {
    const { diagnostics } = read('malformed.tfrc.json');
    expect(diagnostics.map((d) => `${at(d)} ${d.summary}`)).toEqual(['malformed.tfrc.json:6:25 Invalid JSON keyword']);
    const ok = parseCliConfigFile(
      '{"plugin_cache_dir": "/x" "provider_installation": {"direct": [{"exclude": ["a/b",],},]},}',
      'c.tfrc.json',
      'terraform',
    );
    expect(ok.diagnostics).toEqual([]);
    expect(ok.file.pluginCacheDir).toBe('/x');
    expect(ok.file.providerInstallations[0]?.methods[0]).toMatchObject({ kind: 'direct', exclude: ['a/b'] });
  });

  it('is chosen by content, not by file name', () => {
    expect(parseCliConfigFile('  {"plugin_cache_dir": "/j"}', '.terraformrc', 'terraform').file.pluginCacheDir).toBe(
      '/j',
    );
    expect(parseCliConfigFile('plugin_cache_dir = "/h"\n', 'x.tfrc.json', 'terraform').file.pluginCacheDir).toBe('/h');
  });
});
