// Combining files into a module: override files (seed document 002: merged
// per provider for required_providers; provider `version` and resource
// `provider` replaced), duplicates, and the module-level errors. The
// expected texts are terraform 1.11.4's output for the same fixtures.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { ConfigFile } from '../../src/config/index.js';
import { buildModule, configFileNames, moduleRequirements, parseConfigFile } from '../../src/config/index.js';
import { decode, diagLines, FIXTURES, reqLines } from './helpers.js';

function moduleOf(dir: string, flavor: 'terraform' | 'tofu' = 'terraform') {
  const names = configFileNames(
    readdirSync(join(FIXTURES, dir)).map((name) => ({ name, isDirectory: false })),
    flavor,
  );
  const read = (list: string[], override: boolean): { files: ConfigFile[]; diags: string[] } => {
    const files: ConfigFile[] = [];
    const diags: string[] = [];
    for (const n of list) {
      const r = parseConfigFile(readFileSync(join(FIXTURES, dir, n)), n, { flavor, override });
      files.push(r.file);
      diags.push(...diagLines(r.diagnostics));
    }
    return { files, diags };
  };
  const p = read(names.primary, false);
  const o = read(names.override, true);
  const built = buildModule(p.files, o.files, flavor);
  const reqs = moduleRequirements(built.module, flavor);
  return { built, reqs, fileDiags: [...p.diags, ...o.diags] };
}

describe('override files', () => {
  it('merge required_providers per provider, replace provider versions and resource providers (terraform 1.11.4 agrees)', () => {
    const { built, reqs, fileDiags } = moduleOf('overrides');
    expect(built.diagnostics).toEqual([]);
    expect(reqs.diagnostics).toEqual([]);
    // `terraform providers` on this directory:
    //   provider[registry.example.test/acme/demo] 1.0.0, < 2.0.0
    //   provider[registry.example.test/acme/tools] 0.3.0
    //   provider[registry.example.test/acme/other]
    //   provider[registry.terraform.io/hashicorp/foo]
    expect(reqLines(reqs.requirements)).toEqual([
      'registry.example.test/acme/demo 1.0.0, < 2.0.0',
      'registry.example.test/acme/tools 0.3.0',
      'registry.example.test/acme/other',
      'registry.terraform.io/hashicorp/foo',
    ]);
    expect(fileDiags).toEqual([
      'warning main.tf:8:13: Version constraints inside provider configuration blocks are deprecated',
      'warning z_override.tf:7:13: Version constraints inside provider configuration blocks are deprecated',
    ]);
  });

  it('applies override files in name order, the later one winning', () => {
    const base = decode('terraform {\n  required_providers {\n    a = { source = "x/a", version = "1.0.0" }\n  }\n}\n');
    const o1 = decode(
      'terraform {\n  required_providers {\n    a = { source = "x/a", version = "2.0.0" }\n  }\n}\n',
      'terraform',
      'a_override.tf',
    );
    const o2 = decode(
      'terraform {\n  required_providers {\n    a = { source = "x/a", version = "3.0.0" }\n  }\n}\n',
      'terraform',
      'b_override.tf',
    );
    const m = buildModule([base.file], [o1.file, o2.file], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual(['registry.terraform.io/x/a 3.0.0']);
  });

  it('lets an override add required_providers to a module that has none, and override a source', () => {
    const base = decode('resource "a_thing" "x" {}\n');
    const o = decode(
      'terraform {\n  required_providers {\n    a = { source = "corp.example/x/a" }\n  }\n}\n',
      'terraform',
      'override.tf',
    );
    const m = buildModule([base.file], [o.file], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual(['corp.example/x/a']);
  });

  it('replaces the source and version of a module call', () => {
    const base = decode('module "m" {\n  source  = "acme/m/aws"\n  version = "1.0.0"\n}\n');
    const o = decode('module "m" {\n  version = "2.0.0"\n}\n', 'terraform', 'override.tf');
    expect(o.diagnostics).toEqual([]); // source is optional in override files
    const m = buildModule([base.file], [o.file], 'terraform').module;
    expect(m.moduleCalls.get('m')).toMatchObject({ sourceRaw: 'acme/m/aws', version: { text: '2.0.0' } });
  });
});

describe('module-level errors', () => {
  it('refuses a second required_providers block (terraform 1.11.4 text)', () => {
    const { built } = moduleOf('duplicate-required-providers');
    expect(diagLines(built.diagnostics)).toEqual(['error b.tf:2:3: Duplicate required providers configuration']);
    expect(built.diagnostics[0]?.detail).toBe(
      'A module may have only one required providers configuration. The required providers were previously configured at a.tf:2,3-21.',
    );
  });

  it('reports duplicates and overrides without a base, worded as terraform 1.11.4', () => {
    const { built } = moduleOf('duplicates');
    const got = built.diagnostics
      .map((d) => `${d.range?.filename}:${d.range?.start?.line}: ${d.summary}: ${d.detail}`)
      .sort();
    expect(got).toEqual(
      [
        'b.tf:1: Duplicate provider configuration: A default (non-aliased) provider configuration for "aws" was already given at a.tf:1,1-15. If multiple configurations are required, set the "alias" argument for alternative configurations.',
        'b.tf:2: Duplicate provider configuration: A provider configuration for "aws" with alias "x" was already given at a.tf:2,1-15. Each configuration for the same provider must have a distinct alias.',
        'b.tf:5: Duplicate resource "aws_instance" configuration: A aws_instance resource named "web" was already declared at a.tf:5,1-30. Resource names must be unique per type in each module.',
        'b.tf:6: Duplicate data "http" configuration: A http data resource named "h" was already declared at a.tf:6,1-16. Resource names must be unique per type in each module.',
        'b.tf:7: Duplicate module call: A module call named "m" was already defined at a.tf:7,1-11. Module calls must have unique names within a module.',
        'b.tf:8: Duplicate variable declaration: A variable named "v" was already declared at a.tf:8,1-13. Variable names must be unique within a module.',
        'b.tf:9: Duplicate output definition: An output named "o" was already defined at a.tf:9,1-11. Output names must be unique within a module.',
        'b.tf:10: Duplicate local value definition: A local value named "l" was already defined at a.tf:10,10-15. Local value names must be unique within a module.',
        'c_override.tf:1: Missing base provider configuration for override: There is no aws provider configuration with the alias "nope". An override file can only override an aliased provider configuration that was already defined in a primary configuration file.',
        'c_override.tf:4: Missing resource to override: There is no aws_instance resource named "nope". An override file can only override a resource block defined in a primary configuration file.',
        'c_override.tf:5: Missing data resource to override: There is no http data resource named "nope". An override file can only override a data block defined in a primary configuration file.',
        'c_override.tf:6: Missing module call to override: There is no module call named "nope". An override file can only override a module call that was defined in a primary configuration file.',
        'c_override.tf:7: Missing base variable declaration to override: There is no variable named "nope". An override file can only override a variable that was already declared in a primary configuration file.',
        'c_override.tf:8: Missing base output definition to override: There is no output named "nope". An override file can only override an output that was already defined in a primary configuration file.',
        'c_override.tf:9: Missing base local value definition to override: There is no local value named "nope". An override file can only override a local value that was already defined in a primary configuration file.',
        "c_override.tf:10: Cannot override 'moved' blocks: Records of moved objects can appear only in normal files, not in override files.",
        "c_override.tf:14: Cannot override 'import' blocks: Import blocks can appear only in normal files, not in override files.",
      ].sort(),
    );
  });

  it('refuses removed blocks in override files for OpenTofu only', () => {
    const { built } = moduleOf('duplicates', 'tofu');
    expect(
      built.diagnostics
        .filter((d) => d.summary === "Cannot override 'Removed' blocks")
        .map((d) => d.range?.start?.line),
    ).toEqual([18]);
  });

  it('reports duplicate backends and a backend with a cloud block', () => {
    const a = decode('terraform {\n  backend "s3" {}\n}\n', 'terraform', 'a.tf');
    const b = decode('terraform {\n  cloud {}\n  backend "gcs" {}\n}\n', 'terraform', 'b.tf');
    expect(buildModule([a.file, b.file], [], 'terraform').diagnostics.map((d) => d.summary)).toEqual([
      'Duplicate backend configuration',
      'Both a backend and a cloud configuration are present',
    ]);
  });
});

describe('directory listing', () => {
  it('picks .tf and .tf.json, splits overrides, ignores editor and test files, sorts by bytes', () => {
    const entries = [
      'main.tf',
      'override.tf',
      'b_override.tf.json',
      'x.tf.json',
      '.hidden.tf',
      'backup.tf~',
      '#auto.tf#',
      'a.tftest.hcl',
      'notes.md',
      'Z.tf',
      'sub.tf',
    ].map((name) => ({ name, isDirectory: name === 'sub.tf' }));
    expect(configFileNames(entries, 'terraform')).toEqual({
      primary: ['Z.tf', 'main.tf', 'x.tf.json'],
      override: ['b_override.tf.json', 'override.tf'],
    });
  });

  it('reads .tofu files for OpenTofu, which hide the .tf file of the same name', () => {
    const entries = [
      'main.tf',
      'main.tofu',
      'vars.tf.json',
      'vars.tofu.json',
      'other.tf',
      'x_override.tf',
      'x_override.tofu',
      'a.tofutest.hcl',
    ].map((name) => ({
      name,
      isDirectory: false,
    }));
    expect(configFileNames(entries, 'tofu')).toEqual({
      primary: ['main.tofu', 'other.tf', 'vars.tofu.json'],
      override: ['x_override.tofu'],
    });
    expect(configFileNames(entries, 'terraform')).toEqual({
      primary: ['main.tf', 'other.tf', 'vars.tf.json'],
      override: ['x_override.tf'],
    });
  });
});
