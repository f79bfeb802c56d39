// Decoding single files: required_providers (object and legacy forms),
// provider blocks, resources, imports, checks and module calls. Fixtures in
// test/fixtures/config/invalid carry the expected diagnostic on the offending
// line as `# ERROR: <summary>` / `# WARNING: <summary>`; terraform 1.11.4
// reports the same summaries on the same lines (run with `providers lock`).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { buildModule, moduleRequirements, parseConfigFile } from '../../src/config/index.js';
import { decode, details, FIXTURES, reqLines } from './helpers.js';

function annotations(text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const m = /#\s*((?:ERROR|WARNING):.*)$/.exec(line);
    if (!m) return;
    for (const part of (m[1] ?? '').split(/;\s*(?=ERROR:|WARNING:)/)) {
      const [kind, summary] = part.split(/:\s*/, 2) as [string, string];
      out.push(`${kind === 'ERROR' ? 'error' : 'warning'} ${i + 1} ${summary.trim()}`);
    }
  });
  return out.sort();
}

describe('annotated invalid files', () => {
  const dir = join(FIXTURES, 'invalid');
  it.each(readdirSync(dir).sort())('%s: exactly the annotated diagnostics', (name) => {
    const text = readFileSync(join(dir, name), 'utf8');
    const r = parseConfigFile(text, name, { flavor: 'terraform' });
    const m = buildModule([r.file], [], 'terraform');
    const q = moduleRequirements(m.module, 'terraform');
    const got = [...r.diagnostics, ...m.diagnostics, ...q.diagnostics].map(
      (d) => `${d.severity} ${d.range?.start?.line} ${d.summary}`,
    );
    expect(got.sort()).toEqual(annotations(text));
    for (const d of [...r.diagnostics, ...m.diagnostics, ...q.diagnostics]) expect(d.range?.filename).toBe(name);
  });
});

describe('required_providers', () => {
  it('reads the object form, the legacy string form and implied sources', () => {
    const r = decode(`
terraform {
  required_providers {
    demo  = { source = "registry.example.test/acme/demo", version = "~> 1.0" }
    aws   = ">= 2"
    n     = 1
    plain = {}
    Upper = "1.0"
  }
}`);
    expect(r.diagnostics).toEqual([]);
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'registry.example.test/acme/demo ~> 1.0',
      'registry.terraform.io/hashicorp/aws >= 2.0.0',
      // A number is a constraint too: terraform 1.11.4 locks `n = 1` as "1.0.0".
      'registry.terraform.io/hashicorp/n 1.0.0',
      'registry.terraform.io/hashicorp/plain',
      // The legacy form does not insist on a normalized local name.
      'registry.terraform.io/hashicorp/upper 1.0.0',
    ]);
  });

  it('uses the flavor default host and keeps the source as written', () => {
    const r = decode('terraform {\n  required_providers {\n    aws = { source = "HashiCorp/AWS" }\n  }\n}\n', 'tofu');
    const entry = r.file.requiredProviders[0]?.entries[0];
    expect(entry?.provider.toString()).toBe('registry.opentofu.org/hashicorp/aws');
    expect(entry?.source).toBe('HashiCorp/AWS');
  });

  it('reads configuration_aliases', () => {
    const r = decode(
      'terraform {\n  required_providers {\n    aws = { source = "hashicorp/aws", configuration_aliases = [aws.east, aws.west] }\n  }\n}\n',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.file.requiredProviders[0]?.entries[0]?.configurationAliases).toEqual(['east', 'west']);
  });

  it('words its errors as terraform 1.11.4 does', () => {
    const text = readFileSync(join(FIXTURES, 'invalid/required-providers.tf'), 'utf8');
    const r = parseConfigFile(text, 'main.tf', { flavor: 'terraform' });
    const q = moduleRequirements(buildModule([r.file], [], 'terraform').module, 'terraform');
    const byLine = new Map([...r.diagnostics, ...q.diagnostics].map((d) => [d.range?.start?.line, d.detail]));
    // Literal texts from terraform 1.11.4's output for this file.
    expect(byLine.get(7)).toBe('This string does not use correct version constraint syntax.');
    expect(byLine.get(11)).toBe('Version must be specified as a string.');
    expect(byLine.get(12)).toBe(
      'required_providers objects can only contain "version", "source" and "configuration_aliases" attributes. To configure a provider, use a "provider" block.',
    );
    expect(byLine.get(13)).toBe('Provider names must be normalized. Replace "H" with "h" to fix this error.');
    expect(byLine.get(14)).toBe('The "source" attribute must be in the format "[hostname/][namespace/]name"');
    expect(byLine.get(15)).toBe('required_providers entries must be strings or objects.');
    expect(byLine.get(6)).toBe(
      'Incorrect version constraint syntax: invalid specification ">=  1.0": only one space is expected after the operator ">=".',
    );
    expect(byLine.get(9)).toBe('Incorrect version constraint syntax: a "v" prefix should not be used.');
    expect(byLine.get(10)).toBe(
      'Incorrect version constraint syntax: invalid specification "1.0.0.1": too many numbered portions; only three are allowed (major, minor, patch).',
    );
    expect(byLine.get(16)).toBe('Incorrect version constraint syntax: missing comma after "~> 1.0".');
  });

  it("reports the second parser with the flavor's go-versions wording", () => {
    const r = decode(
      'terraform {\n  required_providers {\n    d = { source = "acme/d", version = "v1.0" }\n  }\n}\n',
      'tofu',
    );
    const q = moduleRequirements(buildModule([r.file], [], 'tofu').module, 'tofu');
    expect(details(q.diagnostics)).toEqual([
      'Incorrect version constraint syntax: invalid specification "v1.0": a "v" prefix should not be used when specifying versions.',
    ]);
  });
});

describe('provider blocks', () => {
  it('joins the deprecated version argument to the requirements, with the deprecation warning', () => {
    const r = decode(
      'terraform {\n  required_providers {\n    demo = { source = "acme/demo", version = "~> 1.0" }\n  }\n}\nprovider "demo" {\n  version = ">= 1.0.0"\n}\n',
    );
    expect(r.diagnostics.map((d) => [d.severity, d.summary, d.range?.start?.line, d.range?.start?.column])).toEqual([
      ['warning', 'Version constraints inside provider configuration blocks are deprecated', 7, 13],
    ]);
    // The detail as terraform 1.11.4 prints it (and OpenTofu with its own name).
    expect(r.diagnostics[0]?.detail).toBe(
      'Terraform 0.13 and earlier allowed provider version constraints inside the provider configuration block, but that is now deprecated and will be removed in a future version of Terraform. To silence this warning, move the provider version constraint into the required_providers block.',
    );
    expect(decode('provider "x" {\n  version = "1.0"\n}\n', 'tofu').diagnostics[0]?.detail).toMatch(
      /^OpenTofu 0\.13 and earlier .* version of OpenTofu\. /,
    );
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'registry.terraform.io/acme/demo >= 1.0.0, ~> 1.0',
    ]);
  });

  it('requires the provider of every block, aliases included, through local names', () => {
    const r = decode(
      'terraform {\n  required_providers {\n    mycloud = { source = "corp.example/acme/cloud" }\n  }\n}\nprovider "mycloud" {\n  alias = "east"\n}\nprovider "null" {}\n',
    );
    expect(r.diagnostics).toEqual([]);
    expect(r.file.providerConfigs.map((p) => [p.name, p.alias])).toEqual([
      ['mycloud', 'east'],
      ['null', undefined],
    ]);
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'corp.example/acme/cloud',
      'registry.terraform.io/hashicorp/null',
    ]);
  });

  it('lets OpenTofu use for_each and a non-static alias in provider blocks', () => {
    const r = decode('provider "aws" {\n  for_each = var.regions\n  alias    = var.name\n}\n', 'tofu');
    expect(r.diagnostics).toEqual([]);
    expect(r.file.providerConfigs[0]).toMatchObject({ name: 'aws', aliasSet: true });
  });
});

describe('resources and implied providers', () => {
  it('implies hashicorp/<first word of the type> unless the type or a provider argument names a local name', () => {
    const r = decode(`
terraform {
  required_providers {
    google = { source = "corp.example/x/google" }
  }
}
resource "aws_instance" "a" {}
resource "google_compute_instance" "b" {}
data "http" "c" {}
ephemeral "random_password" "d" {}
resource "aws_s3_bucket" "e" { provider = special.west }
data "terraform_remote_state" "s" {}
resource "null resource" "bad" {}
`);
    expect(r.diagnostics).toEqual([]);
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'corp.example/x/google',
      'registry.terraform.io/hashicorp/aws',
      'registry.terraform.io/hashicorp/special',
      'registry.terraform.io/hashicorp/http',
      // The built-in provider is a requirement of the module; the loader drops it (load.test.ts).
      'terraform.io/builtin/terraform',
      'registry.terraform.io/hashicorp/random',
    ]);
  });

  it('counts data sources in check blocks and the providers of import blocks', () => {
    const r = decode(`
check "health" {
  data "http" "probe" { url = "https://example.com" }
  assert {
    condition     = data.http.probe.status_code == 200
    error_message = "down"
  }
}
import {
  to = module.net.aws_vpc.this["a"]
  id = "vpc-1"
}
import {
  to       = google_project.p
  id       = "p"
  provider = google.beta
}
`);
    expect(r.diagnostics).toEqual([]);
    const m = buildModule([r.file], [], 'terraform').module;
    expect(reqLines(moduleRequirements(m, 'terraform').requirements)).toEqual([
      'registry.terraform.io/hashicorp/http',
      'registry.terraform.io/hashicorp/aws',
      'registry.terraform.io/hashicorp/google',
    ]);
  });
});

describe('module calls', () => {
  it('parses local, registry and remote sources', () => {
    const r = decode(`
module "a" { source = "./a/../b//c/" }
module "b" {
  source  = "hashicorp/consul/aws//modules/x"
  version = "~> 0.1"
}
module "c" { source = "github.com/hashicorp/example?ref=v1" }
`);
    expect(r.diagnostics).toEqual([]);
    expect(r.file.moduleCalls.map((c) => c.source)).toEqual([
      { kind: 'local', path: './b/c' },
      {
        kind: 'registry',
        host: 'registry.terraform.io',
        namespace: 'hashicorp',
        name: 'consul',
        system: 'aws',
        subdir: 'modules/x',
      },
      {
        kind: 'remote',
        raw: 'github.com/hashicorp/example?ref=v1',
        normalized: 'git::https://github.com/hashicorp/example.git?ref=v1',
      },
    ]);
    expect(r.file.moduleCalls[1]?.version?.text).toBe('~> 0.1');
  });

  it('words the source errors as terraform and OpenTofu do', () => {
    const tf = decode('module "a" { source = "modules/foo" }\n');
    // terraform 1.11.4's text:
    expect(tf.diagnostics[0]?.detail).toBe(
      'Terraform failed to determine your intended installation method for remote module package "modules/foo".\n\nIf you intended this as a path relative to the current module, use "./modules/foo" instead. The "./" prefix indicates that the address is a relative filesystem path.',
    );
    const tofu = decode('module "a" {\n  source  = "./x"\n  version = "1.0"\n}\n', 'tofu');
    expect(tofu.diagnostics[0]?.detail).toBe(
      'Failed to parse module registry address: can\'t use local directory "./x" as a module registry address.\n\nOpenTofu assumed that you intended a module registry source address because you also set the argument "version", which applies only to registry modules.',
    );
  });

  it('does not insist on a static source or version for OpenTofu, which evaluates them early', () => {
    expect(decode('module "a" {\n  source  = var.src\n  version = local.v\n}\n', 'tofu').diagnostics).toEqual([]);
    expect(decode('module "a" { source = var.src }\n', 'terraform').diagnostics.map((d) => d.summary)).toEqual([
      'Variables not allowed',
    ]);
  });
});
