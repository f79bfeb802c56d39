// Issue 16: an oci_mirror block whose repository_template cannot work is
// refused when the CLI configuration is read, with OpenTofu's messages
// (opentofu/opentofu internal/command/cliconfig/provider_installation.go,
// prepareOCIMirrorRepositoryMapping: unknown symbols first, then the
// hostname, namespace and type checks, each reported), before any request:
// exit 1, nothing written, nothing left in TMPDIR. No registry is needed.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, flat } from '../support/e2e.js';

const w = e2eWorkspace();
afterAll(() => w.remove());

function config(dir: string, body: string): string {
  const file = join(dir, 'cli.tfrc');
  writeFileSync(file, `provider_installation {\n  oci_mirror {\n${body}\n  }\n}\n`);
  return file;
}

const at = 'Invalid oci_mirror block at 2:14:';

describe('oci_mirror repository_template checks, as OpenTofu reports them', () => {
  it.each([
    [
      'unknown symbol',
      '    repository_template = "r.example/${namespace}/${type}/${version}"\n    include = ["r.example/*/*"]',
      [
        `${at} the symbol "version" is not available for an OCI mirror repository address template. Only "hostname", "namespace", and "type" are available.`,
      ],
    ],
    [
      'no hostname, no include',
      '    repository_template = "r.example/${namespace}/${type}"',
      [
        `${at} template must refer to the "hostname" symbol unless the "include" argument selects exactly one registry hostname.`,
      ],
    ],
    [
      'no namespace, no type',
      '    repository_template = "r.example/${hostname}"',
      [
        `${at} template must refer to the "namespace" symbol unless the "include" argument selects exactly one provider namespace.`,
        `${at} template must refer to the "type" symbol unless the "include" argument selects exactly one provider.`,
      ],
    ],
    [
      'not a repository address',
      '    repository_template = "${namespace}/${type}:latest"\n    include = ["r.example/*/*"]',
      [
        `${at} template must generate a valid OCI repository address, including a registry hostname followed by a slash and then a repository name.`,
      ],
    ],
  ])(
    '%s: install and lock exit 1 with the reference message, nothing written',
    async (name, body, details) => {
      for (const command of [['install'], ['lock', '-platform=linux_amd64']]) {
        const p = w.project(`${name.replaceAll(' ', '-').replaceAll(',', '')}-${command[0]!}`, {
          'main.tf': requiresTf({ demo: 'r.example/acme/demo' }),
        });
        const r = await runCli(command, { cwd: p, env: { ...w.env, TF_CLI_CONFIG_FILE: config(p, body) } });
        expect(r.timedOut).toBe(false);
        expect(r.code).toBe(1);
        for (const d of details)
          expect(flat(r.stderr)).toContain(flat(`Error: Invalid oci_mirror repository template\n\n${d}`));
        expect(r.stderr.match(/Error: /g)).toHaveLength(details.length);
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
        expect(existsSync(join(p, '.terraform'))).toBe(false);
        expect(w.tmpLeftovers()).toEqual([]);
      }
    },
    60_000,
  );

  it('a missing repository_template is "argument is required"', async () => {
    const p = w.project('missing', { 'main.tf': requiresTf({ demo: 'r.example/acme/demo' }) });
    const r = await runCli(['install'], {
      cwd: p,
      env: { ...w.env, TF_CLI_CONFIG_FILE: config(p, '    include = ["r.example/*/*"]') },
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain('Error: Invalid provider_installation method block');
    expect(flat(r.stderr)).toContain(`${at} "repository_template" argument is required.`);
    expect(existsSync(join(p, '.terraform'))).toBe(false);
  }, 60_000);
});
