// Loading and merging the CLI configuration, with an in-memory file system
// and an injected environment (no real $HOME). Precedence cases were checked
// with terraform 1.11.4 through the plugin cache directory it reports.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseProviderSource } from '../../src/addresses/index.js';
import { expandEnv, forcedServiceURL, loadCliConfig, matches, tokenForHost } from '../../src/cliconfig/index.js';
import type { CliConfig, CliConfigDiagnostic, InstallationMethod } from '../../src/cliconfig/index.js';
import { ctx, memCliFs } from './helpers.js';

const FIX = fileURLToPath(new URL('../fixtures/cliconfig/', import.meta.url));
const fixture = (name: string): string => readFileSync(join(FIX, name), 'utf8');
const summaries = (ds: readonly CliConfigDiagnostic[]): string[] => ds.map((d) => `${d.severity}: ${d.summary}`);
const methods = (c: CliConfig): string[] =>
  c.providerInstallation.methods.map((m: InstallationMethod) =>
    [
      m.kind,
      m.kind === 'filesystem_mirror' ? m.path : m.kind === 'network_mirror' ? m.url : '',
      ...m.include.map((p) => `+${p.text}`),
      ...m.exclude.map((p) => `-${p.text}`),
    ]
      .filter((x) => x !== '')
      .join(' '),
  );

describe('locations and precedence (terraform 1.11.4)', () => {
  const cacheDirs = ['/c/env', '/c/main', '/c/json', '/c/a', '/c/b'];
  const files = {
    '/home/u/.terraformrc': 'plugin_cache_dir = "/c/main"\n',
    '/home/u/.terraform.d/0.tfrc.json': '{"plugin_cache_dir": "/c/json"}',
    '/home/u/.terraform.d/a.tfrc': 'plugin_cache_dir = "/c/a"\n',
    '/home/u/.terraform.d/b.tfrc': 'plugin_cache_dir = "/c/b"\n',
    '/home/u/.terraform.d/notes.txt': 'ignored',
  };

  it('takes plugin_cache_dir from the main file before the config directory', async () => {
    const c = await loadCliConfig(ctx('terraform'), memCliFs(files, cacheDirs));
    expect(c.files).toEqual([
      '/home/u/.terraformrc',
      '/home/u/.terraform.d/0.tfrc.json',
      '/home/u/.terraform.d/a.tfrc',
      '/home/u/.terraform.d/b.tfrc',
    ]);
    expect(c.pluginCacheDir).toBe('/c/main');
    expect(c.diagnostics).toEqual([]);
  });

  it('then from the first config-directory file in name order', async () => {
    const { ['/home/u/.terraformrc']: _main, ...rest } = files;
    expect((await loadCliConfig(ctx('terraform'), memCliFs(rest, cacheDirs))).pluginCacheDir).toBe('/c/json');
  });

  it('and TF_PLUGIN_CACHE_DIR wins over both', async () => {
    expect(
      (await loadCliConfig(ctx('terraform', { TF_PLUGIN_CACHE_DIR: '/c/env' }), memCliFs(files, cacheDirs)))
        .pluginCacheDir,
    ).toBe('/c/env');
  });

  it('reads only the named file when TF_CLI_CONFIG_FILE is set, and warns when it is missing', async () => {
    const c = await loadCliConfig(
      ctx('terraform', { TF_CLI_CONFIG_FILE: '/etc/provkit.tfrc' }),
      memCliFs(files, cacheDirs),
    );
    expect(c.files).toEqual([]);
    expect(c.pluginCacheDir).toBeUndefined();
    // terraform 1.11.4: Warning: Unable to open CLI configuration file / The CLI configuration file at "/root/.terraformrc" does not exist.
    expect(c.diagnostics).toEqual([
      {
        severity: 'warning',
        summary: 'Unable to open CLI configuration file',
        detail: 'The CLI configuration file at "/etc/provkit.tfrc" does not exist.',
        code: 'CLI_CONFIGURATION_WARNING',
      },
    ]);
  });

  it('reads ~/.tofurc and the XDG config directory for OpenTofu', async () => {
    const c = await loadCliConfig(
      ctx('tofu', { XDG_CONFIG_HOME: '/xdg' }),
      memCliFs(
        {
          '/xdg/opentofu/tofurc': 'plugin_cache_dir = "/c/main"\n',
          '/xdg/opentofu/x.tfrc': 'credentials "h.example" {\n  token = "t"\n}\n',
        },
        cacheDirs,
      ),
    );
    expect(c.files).toEqual(['/xdg/opentofu/tofurc', '/xdg/opentofu/x.tfrc']);
    expect(tokenForHost(c, 'h.example')).toBe('t');
  });

  it('reports a plugin cache directory that does not exist, as terraform 1.11.4 does', async () => {
    const c = await loadCliConfig(
      ctx('terraform'),
      memCliFs({ '/home/u/.terraformrc': 'plugin_cache_dir = "/nonexistent/$HOME/x"\n' }),
    );
    expect(c.pluginCacheDir).toBe('/nonexistent//home/u/x');
    expect(summaries(c.diagnostics)).toEqual([
      'error: The specified plugin cache dir /nonexistent//home/u/x cannot be opened: stat /nonexistent//home/u/x: no such file or directory',
    ]);
  });
});

describe('merged settings', () => {
  it('lets later files replace hosts and credentials, and the environment beat credentials blocks', async () => {
    const c = await loadCliConfig(
      ctx('terraform', { TF_TOKEN_app_terraform_io: 'from-env' }),
      memCliFs(
        {
          '/home/u/.terraformrc': fixture('full.tfrc'),
          '/home/u/.terraform.d/z.tfrc':
            'host "example.com" {\n  services = { "providers.v1" = "https://later.example/" }\n}\ncredentials "CAFÉ.example" {\n  token = "later"\n}\n',
        },
        ['/home/u/.terraform.d/plugin-cache'],
      ),
    );
    expect(c.diagnostics.map((d) => d.summary)).toEqual([]);
    expect(c.pluginCacheDir).toBe('/home/u/.terraform.d/plugin-cache');
    expect(c.pluginCacheMayBreakDependencyLockFile).toBe(true);
    expect(forcedServiceURL(c, 'EXAMPLE.com:443', 'providers.v1')).toBe('https://later.example/');
    expect(forcedServiceURL(c, 'registry.internal:8443', 'providers.v1')).toBe(
      'https://registry.internal:8443/providers/',
    );
    expect(tokenForHost(c, 'app.terraform.io')).toBe('from-env');
    expect(tokenForHost(c, 'xn--caf-dma.example')).toBe('later');
    expect(tokenForHost(c, 'nowhere.example')).toBeUndefined();
  });

  it('turns plugin_cache_may_break_dependency_lock_file on from the environment, except for "" and "0"', async () => {
    const fs = memCliFs({});
    expect(
      (await loadCliConfig(ctx('terraform', { TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE: '1' }), fs))
        .pluginCacheMayBreakDependencyLockFile,
    ).toBe(true);
    expect(
      (await loadCliConfig(ctx('terraform', { TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE: '0' }), fs))
        .pluginCacheMayBreakDependencyLockFile,
    ).toBe(false);
  });

  it('validates hostnames, credentials helpers and provider_installation blocks as terraform 1.11.4 does', async () => {
    const c = await loadCliConfig(
      ctx('terraform', { TF_CLI_CONFIG_FILE: '/p.tfrc' }),
      memCliFs({ '/p.tfrc': fixture('problems.tfrc') }),
    );
    expect(summaries(c.diagnostics)).toEqual([
      'error: Invalid provider_installation method block',
      'error: Invalid provider_installation method block',
      'error: The host "bad..host" block has an invalid hostname: hostname contains empty label (two consecutive periods)',
      'error: No more than one credentials_helper block may be specified',
      'error: No more than one provider_installation block may be specified',
      'error: The specified plugin cache dir /nonexistent//home/u/x cannot be opened: stat /nonexistent//home/u/x: no such file or directory',
      'warning: Credentials helpers are not supported',
      'error: Invalid URL for provider installation source',
      'error: Invalid provider source exclusion patterns',
    ]);
    const details = c.diagnostics.map((d) => d.detail);
    expect(details).toContain(
      'Cannot use "http://example.com/" as a URL for a network provider mirror: the mirror must be at an https: URL.',
    );
    expect(details).toContain(
      'CLI config specifies invalid provider exclusion patterns: invalid provider matching pattern "*/foo": namespace can be a wildcard only if the provider type is also a wildcard.',
    );
    // Invalid methods are left out; the dev_overrides that followed them are kept.
    expect(c.providerInstallation.methods).toEqual([]);
    expect([...c.providerInstallation.devOverrides.keys()]).toEqual(['registry.terraform.io/hashicorp/null']);
    expect(c.credentialsHelper).toEqual({ type: 'a', args: [] });
  });
});

describe('provider installation', () => {
  it('uses the explicit methods in order, with parsed patterns', async () => {
    const c = await loadCliConfig(
      ctx('terraform'),
      memCliFs({ '/home/u/.terraformrc': fixture('full.tfrc') }, ['/home/u/.terraform.d/plugin-cache']),
    );
    expect(c.providerInstallation.implied).toBe(false);
    expect(methods(c)).toEqual([
      'filesystem_mirror /usr/share/terraform/providers +example.com/*/*',
      'network_mirror https://mirror.example.net/providers/ +registry.terraform.io/hashicorp/* +registry.opentofu.org/*/* -registry.terraform.io/hashicorp/google-beta',
      'direct -example.com/*/*',
    ]);
    const [fsMirror, netMirror, direct] = c.providerInstallation.methods as [
      InstallationMethod,
      InstallationMethod,
      InstallationMethod,
    ];
    const aws = parseProviderSource('hashicorp/aws', 'terraform');
    const corp = parseProviderSource('example.com/acme/thing', 'terraform');
    expect([matches(fsMirror, aws), matches(netMirror, aws), matches(direct, aws)]).toEqual([false, true, true]);
    expect([matches(fsMirror, corp), matches(netMirror, corp), matches(direct, corp)]).toEqual([true, false, false]);
    expect(netMirror).toMatchObject({ downloadRetryCount: 3 });
    expect(c.providerInstallation.devOverrides.get('registry.terraform.io/hashicorp/null')?.dir).toBe(
      '/home/dev/go/bin',
    );
  });

  it('is implied from the local mirror directories that exist, then direct', async () => {
    const c = await loadCliConfig(
      ctx('terraform', { XDG_DATA_DIRS: '/d1:/d2' }),
      memCliFs({}, ['/work/terraform.d/plugins', '/d2/terraform/plugins', '/home/u/.terraform.d']),
    );
    expect(c.providerInstallation.implied).toBe(true);
    expect(c.providerInstallation.methods).toEqual([
      { kind: 'filesystem_mirror', path: '/work/terraform.d/plugins', include: [], exclude: [], implied: true },
      { kind: 'filesystem_mirror', path: '/d2/terraform/plugins', include: [], exclude: [], implied: true },
      { kind: 'direct', include: [], exclude: [], excludeProvidersInLocalMirrors: true },
    ]);
  });

  it('uses the first provider_installation block when there are several (with an error)', async () => {
    const c = await loadCliConfig(
      ctx('tofu'),
      memCliFs({
        '/home/u/.tofurc': 'provider_installation {\n  direct {}\n}\n',
        '/home/u/.terraform.d/x.tfrc': 'provider_installation {\n  filesystem_mirror {\n    path = "/m"\n  }\n}\n',
      }),
    );
    expect(methods(c)).toEqual(['direct']);
    expect(summaries(c.diagnostics)).toEqual(['error: No more than one provider_installation block may be specified']);
  });

  it('keeps trust_all_hashes for OpenTofu only', async () => {
    const text =
      'provider_installation {\n  network_mirror {\n    url              = "https://m.example/"\n    trust_all_hashes = true\n  }\n}\n';
    for (const flavor of ['tofu', 'terraform'] as const) {
      const c = await loadCliConfig(ctx(flavor, { TF_CLI_CONFIG_FILE: '/c' }), memCliFs({ '/c': text }));
      expect(c.providerInstallation.methods[0]).toMatchObject(
        flavor === 'tofu' ? { trustAllHashes: true } : { kind: 'network_mirror' },
      );
      if (flavor === 'terraform') expect(c.providerInstallation.methods[0]).not.toHaveProperty('trustAllHashes');
    }
  });
});

describe('expandEnv (Go os.ExpandEnv)', () => {
  it.each([
    ['$HOME/x', '/h/x'],
    ['${HOME}/x', '/h/x'],
    ['$UNSET/x', '/x'],
    ['a$', 'a$'],
    ['$$', ''],
    ['${}x', 'x'],
    ['${HOME', 'HOME'],
    ['$1x', 'x'],
    ['100$/x', '100$/x'],
  ])('%s → %s', (s, want) => {
    expect(expandEnv(s, { HOME: '/h' })).toBe(want);
  });
});
