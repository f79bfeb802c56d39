// Issue 16: OpenTofu's oci_mirror installation method and OCI credentials in
// the CLI configuration, with the reference's messages (opentofu/opentofu
// internal/command/cliconfig/provider_installation.go, oci_credentials.go,
// ociauthconfig/), and which credentials a repository gets.
import { describe, expect, it } from 'vitest';

import { newProviderAddress } from '../../src/addresses/index.js';
import {
  loadCliConfig,
  ociCredentialsLookup,
  parseCliConfigFile,
  prefixSpecificity,
  type CliConfig,
  type HelperResult,
} from '../../src/cliconfig/index.js';
import { ctx, memCliFs } from './helpers.js';

const method = (body: string): string => `provider_installation {\n  oci_mirror {\n${body}\n  }\n}\n`;
const details = (src: string): string[] =>
  parseCliConfigFile(src, 'x.tfrc', 'tofu').diagnostics.map((d) => `${d.summary}: ${d.detail}`);

describe('oci_mirror repository_template', () => {
  it('a valid template maps providers to repositories', async () => {
    const cfg = await loadCliConfig(
      ctx('tofu', { TF_CLI_CONFIG_FILE: '/c.tfrc' }),
      memCliFs({
        '/c.tfrc': method(
          '    repository_template = "registry.internal:5000/mirror/${namespace}/${type}"\n    include = ["registry.opentofu.org/*/*"]',
        ),
      }),
    );
    expect(cfg.diagnostics).toEqual([]);
    const m = cfg.providerInstallation.methods[0];
    expect(m?.kind).toBe('oci_mirror');
    if (m?.kind !== 'oci_mirror') return;
    expect(m.repositoryFor(newProviderAddress('registry.opentofu.org', 'hashicorp', 'tls'))).toEqual({
      registry: 'registry.internal:5000',
      repository: 'mirror/hashicorp/tls',
    });
    expect(m.include.map((p) => p.text)).toEqual(['registry.opentofu.org/*/*']);
  });

  it('hostname may be left out when include pins one host; conditionals and %{if} evaluate', async () => {
    const src = method(
      '    repository_template = "r.example/${namespace == "hashicorp" ? "hc" : namespace}/%{ if type == "aws" }big-%{ endif }${type}"\n    include = ["hashicorp/*", "acme/*"]',
    );
    const cfg = await loadCliConfig(ctx('tofu', { TF_CLI_CONFIG_FILE: '/c.tfrc' }), memCliFs({ '/c.tfrc': src }));
    expect(cfg.diagnostics).toEqual([]);
    const m = cfg.providerInstallation.methods[0];
    if (m?.kind !== 'oci_mirror') throw new Error('no oci_mirror');
    expect(m.repositoryFor(newProviderAddress('registry.opentofu.org', 'hashicorp', 'aws')).repository).toBe(
      'hc/big-aws',
    );
    expect(m.repositoryFor(newProviderAddress('registry.opentofu.org', 'acme', 'demo')).repository).toBe('acme/demo');
  });

  it.each([
    [
      '',
      [
        'Invalid provider_installation method block: Invalid oci_mirror block at 2:14: "repository_template" argument is required.',
      ],
    ],
    [
      '    repository_template = "r.example/${namespace}/${type}/${version}"',
      [
        'Invalid oci_mirror repository template: Invalid oci_mirror block at 2:14: the symbol "version" is not available for an OCI mirror repository address template. Only "hostname", "namespace", and "type" are available.',
      ],
    ],
    [
      '    repository_template = "r.example/${type}"',
      [
        'Invalid oci_mirror repository template: Invalid oci_mirror block at 2:14: template must refer to the "namespace" symbol unless the "include" argument selects exactly one provider namespace.',
      ],
    ],
    [
      '    repository_template = "r.example/fixed"\n    include = ["r.example/a/b", "r.example/a/c"]',
      [
        'Invalid oci_mirror repository template: Invalid oci_mirror block at 2:14: template must refer to the "type" symbol unless the "include" argument selects exactly one provider.',
      ],
    ],
    [
      '    repository_template = "${namespace}/${type}:latest"\n    include = ["r.example/*/*"]',
      [
        'Invalid oci_mirror repository template: Invalid oci_mirror block at 2:14: template must generate a valid OCI repository address, including a registry hostname followed by a slash and then a repository name.',
      ],
    ],
  ])('%j is refused as OpenTofu refuses it', (body, want) => {
    const all = details(method(body));
    // The hostname check comes first in the reference too; only the ones asked for are compared.
    expect(all.filter((d) => !d.includes('"hostname" symbol'))).toEqual(want);
  });

  it('one pinned namespace and type need no symbols but the include must then fix the host too', () => {
    expect(
      details(method('    repository_template = "r.example/just/this"\n    include = ["r.example/acme/demo"]')),
    ).toEqual([]);
  });
});

describe('oci_credentials and oci_default_credentials blocks', () => {
  it.each([
    [
      'oci_credentials "r.example" {}',
      'The oci_credentials block at 1:29 must set either username+password, access_token+refresh_token, or docker_credentials_helper.',
    ],
    [
      'oci_credentials "r.example" {\n  username = "u"\n}',
      'The oci_credentials block at 1:29 must set both username and password together when using static credentials.',
    ],
    [
      'oci_credentials "r.example" {\n  username = "u"\n  password = "p"\n  access_token = "a"\n}',
      'The oci_credentials block at 1:29 must set only one group out of username+password, access_token+refresh_token, or docker_credentials_helper.',
    ],
    [
      'oci_credentials "r.example/repo" {\n  docker_credentials_helper = "pass"\n}',
      'The oci_credentials block at 1:34 cannot set docker_credentials_helper with a repository path: credential helpers only support credentials for whole domains.',
    ],
    [
      'oci_credentials "R.example/Repo" {\n  username = "u"\n  password = "p"\n}',
      'The oci_credentials block at 1:34 has an invalid block label: invalid reference: invalid repository "Repo".',
    ],
    [
      'oci_default_credentials {\n  discover_ambient_credentials = false\n  docker_style_config_files = ["a.json"]\n}',
      'The oci_default_credentials block at 1:25 disables discovery of ambient credentials, but also sets docker_style_config_files which is relevant only when ambient credentials discovery is enabled.',
    ],
    [
      'oci_default_credentials {\n  docker_credentials_helper = "a/b"\n}',
      'The oci_default_credentials block at 1:25 specifies the invalid Docker credential helper name "a/b". Must be a non-empty string that could be used as part of an executable filename.',
    ],
  ])('%j', (src, detail) => {
    expect(parseCliConfigFile(src, 'x.tfrc', 'tofu').diagnostics.map((d) => d.detail)).toEqual([detail]);
  });

  it('merged across files: duplicates and a second oci_default_credentials are errors', async () => {
    const fs = memCliFs({
      '/home/u/.tofurc':
        'oci_credentials "r.example" {\n  username = "a"\n  password = "b"\n}\noci_default_credentials {}\n',
      '/home/u/.terraform.d/x.tfrc':
        'oci_credentials "r.example" {\n  username = "c"\n  password = "d"\n}\noci_default_credentials {}\n',
    });
    const cfg = await loadCliConfig(ctx('tofu'), fs);
    expect(cfg.diagnostics.map((d) => d.summary)).toEqual([
      'No more than one oci_default_credentials block may be specified',
      'Duplicate oci_credentials block for "r.example"',
    ]);
  });
});

describe('which credentials a repository gets', () => {
  it('ContainersAuthPropertyNameMatch: registry, then longer path prefixes win', () => {
    expect(prefixSpecificity('r.example', 'r.example', 'a/b')).toBe(2);
    expect(prefixSpecificity('r.example/a', 'r.example', 'a/b')).toBe(3);
    expect(prefixSpecificity('r.example/a/b', 'r.example', 'a/b')).toBe(4);
    expect(prefixSpecificity('r.example/a/b/c', 'r.example', 'a/b')).toBe(0);
    expect(prefixSpecificity('r.example/ab', 'r.example', 'a/b')).toBe(0);
    expect(prefixSpecificity('other.example', 'r.example', 'a/b')).toBe(0);
    expect(prefixSpecificity('https://r.example', 'r.example', 'a/b')).toBe(0);
  });

  const config = (over: Partial<CliConfig>): CliConfig => ({ ociCredentials: [], ...over }) as unknown as CliConfig;

  it('explicit blocks, then the default helper, then Docker-style files; most specific wins, first among equals', async () => {
    const files: Record<string, string> = {
      '/home/u/.docker/config.json': JSON.stringify({
        auths: {
          'r.example': { auth: Buffer.from('docker:pw').toString('base64') },
          'r.example/team/x': { auth: Buffer.from('repo:pw').toString('base64') },
        },
        credHelpers: { 'h.example': 'helperx' },
        credsStore: 'store',
      }),
    };
    const helperCalls: string[] = [];
    const lookup = ociCredentialsLookup(
      config({ ociCredentials: [{ prefix: 'r.example', kind: 'basic', username: 'block', password: 'pw' }] }),
      {
        env: {},
        homeDir: '/home/u',
        os: 'linux',
        readFile: (p) =>
          files[p] === undefined
            ? Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' }))
            : Promise.resolve(Buffer.from(files[p])),
        runHelper: (name, url): Promise<HelperResult> => {
          helperCalls.push(`${name} ${url}`);
          return Promise.resolve(
            name === 'store' ? { found: false } : { found: true, username: `from-${name}`, secret: 's' },
          );
        },
      },
    );
    // The block and the config file's entry are equally specific: the block (first) wins.
    expect(await lookup('r.example', 'team/y')).toEqual({ kind: 'basic', username: 'block', password: 'pw' });
    // A repository-path entry is more specific than the block.
    expect(await lookup('r.example', 'team/x/z')).toEqual({ kind: 'basic', username: 'repo', password: 'pw' });
    expect(await lookup('h.example', 'a')).toEqual({ kind: 'basic', username: 'from-helperx', password: 's' });
    // Only the global credsStore: it has nothing, so anonymous.
    expect(await lookup('none.example', 'a')).toBeUndefined();
    expect(helperCalls).toEqual(['helperx https://h.example', 'store https://none.example']);
  });

  it('a malformed auth entry that matches is an error; explicit config files must exist', async () => {
    const broken = ociCredentialsLookup(config({}), {
      env: {},
      homeDir: '/home/u',
      os: 'linux',
      readFile: (p) =>
        p === '/home/u/.docker/config.json'
          ? Promise.resolve(
              Buffer.from(
                JSON.stringify({ auths: { 'r.example': { auth: Buffer.from('nocolon').toString('base64') } } }),
              ),
            )
          : Promise.reject(Object.assign(new Error('ENOENT'), { code: 'ENOENT' })),
    });
    await expect(broken('r.example', 'a')).rejects.toThrow(
      'auth object for "r.example" in /home/u/.docker/config.json does not have base64-encoded username:password pair',
    );
    const explicit = ociCredentialsLookup(
      config({ ociDefaultCredentials: { discoverAmbientCredentials: true, dockerStyleConfigFiles: ['/nope.json'] } }),
      {
        env: {},
        homeDir: '/home/u',
        os: 'linux',
        readFile: () => Promise.reject(Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' })),
      },
    );
    await expect(explicit('r.example', 'a')).rejects.toThrow(
      'failed to read Docker-style config files: reading /nope.json: no such file or directory',
    );
  });
});
