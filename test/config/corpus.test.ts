// Real-world-style configurations load without errors and give the provider
// requirements terraform 1.11.4 gives (`terraform providers` on each; the
// backend.tf files were left out of terraform's copy, as `providers` needs an
// initialised backend). test/fixtures/config/corpus holds multi-file
// configurations (heredocs, dynamic blocks, for expressions, modules, the JSON
// syntax, override files); test/hcl/corpus holds single files of the HCL
// engineer's corpus, each loaded as a module of its own.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadModuleRequirements } from '../../src/config/index.js';
import { diagLines, FIXTURES, HCL_CORPUS, loadMem, reqLines } from './helpers.js';

const CORPUS: Record<string, { requirements: string[]; warnings?: string[] }> = {
  // terraform: aws ~> 5.40, random >= 3.5.0; module.sg: aws >= 5.0.0
  'aws-three-tier': {
    requirements: [
      'registry.terraform.io/hashicorp/aws >= 5.0.0, ~> 5.40',
      'registry.terraform.io/hashicorp/random >= 3.5.0',
    ],
  },
  'gcp-gke': {
    requirements: [
      'registry.terraform.io/hashicorp/google >= 5.0.0, < 7.0.0',
      'registry.terraform.io/hashicorp/google-beta >= 5.0.0, < 7.0.0',
    ],
  },
  'k8s-helm-addons': {
    requirements: [
      'registry.terraform.io/gavinbunney/kubectl >= 1.14.0',
      'registry.terraform.io/hashicorp/helm ~> 2.12',
      'registry.terraform.io/hashicorp/kubernetes ~> 2.27',
    ],
  },
  'legacy-012': {
    requirements: [
      'registry.terraform.io/hashicorp/aws >= 2.70.0, ~> 3.0, < 4.0.0',
      'registry.terraform.io/hashicorp/null 2.1.2',
      'registry.terraform.io/hashicorp/template ~> 2.1',
    ],
    warnings: [
      'warning main.tf:13:13: Version constraints inside provider configuration blocks are deprecated',
      'warning main.tf:18:13: Version constraints inside provider configuration blocks are deprecated',
    ],
  },
  // The override files move aws to ~> 5.0 (plus >= 5.10 from a JSON provider
  // block) and send local_file to the `localfs` local name.
  'override-env': {
    requirements: [
      'registry.terraform.io/cloudflare/cloudflare ~> 3.0',
      'registry.terraform.io/hashicorp/aws ~> 5.0, >= 5.10.0',
      'registry.terraform.io/hashicorp/localfs',
    ],
    warnings: [
      'warning ci_override.tf.json:4:18: Version constraints inside provider configuration blocks are deprecated',
    ],
  },
  // terraform: aws >= 5.0.0; module.labels (none); module.replica: aws >= 4.0.0, != 5.1.0
  'multi-alias-modules': { requirements: ['registry.terraform.io/hashicorp/aws >= 4.0.0, >= 5.0.0, != 5.1.0'] },
  'datadog-monitoring': {
    requirements: [
      'registry.terraform.io/datadog/datadog ~> 3.38',
      'registry.terraform.io/hashicorp/http',
      'registry.terraform.io/pagerduty/pagerduty >= 3.0.0',
    ],
  },
  'azure-json': {
    requirements: [
      'registry.terraform.io/hashicorp/azuread ~> 2.47',
      'registry.terraform.io/hashicorp/azurerm ~> 3.100',
    ],
  },
};

describe('multi-file corpus (test/fixtures/config/corpus)', () => {
  it.each(Object.keys(CORPUS))('%s loads with the requirements terraform reports', async (name) => {
    const want = CORPUS[name]!;
    const r = await loadModuleRequirements(join(FIXTURES, 'corpus', name), { flavor: 'terraform' });
    expect(diagLines(r.diagnostics)).toEqual(want.warnings ?? []);
    expect(reqLines(r.requirements)).toEqual(want.requirements);
  });

  it('has at least eight configurations', () => {
    expect(Object.keys(CORPUS).length).toBeGreaterThanOrEqual(8);
  });

  it('loads the same way for OpenTofu, on its own default registry', async () => {
    const r = await loadModuleRequirements(join(FIXTURES, 'corpus', 'k8s-helm-addons'), { flavor: 'tofu' });
    expect(r.diagnostics).toEqual([]);
    expect(reqLines(r.requirements)).toEqual([
      'registry.opentofu.org/gavinbunney/kubectl >= 1.14.0',
      'registry.opentofu.org/hashicorp/helm ~> 2.12',
      'registry.opentofu.org/hashicorp/kubernetes ~> 2.27',
    ]);
  });
});

const HCL_FILES: Record<string, { requirements: string[]; errors?: string[] }> = {
  'aws-eks.tf': { requirements: ['registry.terraform.io/hashicorp/aws'] },
  'aws-vpc-module.tf': { requirements: ['registry.terraform.io/hashicorp/aws'] },
  'azure-dynamic.tf': { requirements: ['registry.terraform.io/hashicorp/azurerm'] },
  'comments.tf': { requirements: ['registry.terraform.io/hashicorp/null'] },
  'gcp-network-for-each.tf': { requirements: ['registry.terraform.io/hashicorp/google'] },
  'kubernetes-helm.tf': {
    requirements: ['registry.terraform.io/hashicorp/helm', 'registry.terraform.io/hashicorp/kubernetes'],
  },
  // terraform also lists the built-in terraform.io/builtin/terraform, which is never locked.
  'moved-import-check.tf': {
    requirements: ['registry.terraform.io/hashicorp/aws', 'registry.terraform.io/hashicorp/http'],
  },
  'outputs-expressions.tf': { requirements: ['registry.terraform.io/hashicorp/aws'] },
  'templates.tf': { requirements: [] },
  'variables-validation.tf': { requirements: [] },
  // Calls a registry module that is not installed: terraform refuses the same way.
  'versions.tf': {
    requirements: [
      'registry.opentofu.org/hashicorp/helm 2.13.2',
      'registry.terraform.io/hashicorp/aws >= 5.46.0, < 6.0.0',
      'registry.terraform.io/hashicorp/kubernetes ~> 2.30',
      'registry.terraform.io/hashicorp/tls',
      'tf.example.com/platform/corp-internal ~> 0.4.0',
    ],
    errors: ['error main.tf:62:1: Module not installed'],
  },
};

describe('single files of the HCL corpus (test/hcl/corpus)', () => {
  it.each(Object.keys(HCL_FILES))('%s', async (file) => {
    const want = HCL_FILES[file]!;
    const r = await loadMem({ 'main.tf': readFileSync(join(HCL_CORPUS, file), 'utf8') });
    expect(diagLines(r.diagnostics).filter((l) => l.startsWith('error'))).toEqual(want.errors ?? []);
    expect(reqLines(r.requirements)).toEqual(want.requirements);
  });

  it('legacy-required-providers.tf: loads (known gap: terraform 1.11.4 refuses its quoted variable type "map")', async () => {
    const r = await loadMem({ 'main.tf': readFileSync(join(HCL_CORPUS, 'legacy-required-providers.tf'), 'utf8') });
    expect(diagLines(r.diagnostics)).toEqual([
      'warning main.tf:16:13: Version constraints inside provider configuration blocks are deprecated',
    ]);
    expect(reqLines(r.requirements)).toEqual([
      'registry.terraform.io/hashicorp/aws ~> 2.70',
      'registry.terraform.io/hashicorp/null 2.1.2',
      'registry.terraform.io/hashicorp/template >= 2.1.0',
    ]);
  });
});
