// Where the CLI configuration is looked for, per flavor and OS (docs/reference.md §7 items
// 97 and 100), with the environment and home directory injected.
import { describe, expect, it } from 'vitest';

import {
  configDirectory,
  impliedMirrorCandidates,
  mainConfigFile,
  pluginDirectory,
  userDataPluginDirs,
} from '../../src/cliconfig/index.js';
import { ctx } from './helpers.js';

const exists =
  (...paths: string[]) =>
  (p: string): boolean =>
    paths.includes(p);

describe('the main file', () => {
  it('is TF_CLI_CONFIG_FILE, else TERRAFORM_CONFIG, for both flavors', async () => {
    expect(
      await mainConfigFile(ctx('tofu', { TF_CLI_CONFIG_FILE: '/a.tfrc', TERRAFORM_CONFIG: '/b.tfrc' }), exists()),
    ).toEqual({ path: '/a.tfrc', fromEnv: true });
    expect(await mainConfigFile(ctx('terraform', { TERRAFORM_CONFIG: '/b.tfrc' }), exists())).toEqual({
      path: '/b.tfrc',
      fromEnv: true,
    });
    // An empty variable counts as unset.
    expect((await mainConfigFile(ctx('terraform', { TF_CLI_CONFIG_FILE: '' }), exists())).path).toBe(
      '/home/u/.terraformrc',
    );
  });

  it('is ~/.terraformrc for Terraform, %APPDATA%\\terraform.rc on Windows', async () => {
    expect((await mainConfigFile(ctx('terraform'), exists())).path).toBe('/home/u/.terraformrc');
    expect(
      (await mainConfigFile(ctx('terraform', { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'windows'), exists())).path,
    ).toBe('C:\\Users\\u\\AppData\\Roaming\\terraform.rc');
  });

  it('is ~/.tofurc for OpenTofu, ~/.terraformrc only when that alone exists, and the XDG file on a fresh install', async () => {
    expect((await mainConfigFile(ctx('tofu'), exists())).path).toBe('/home/u/.tofurc');
    expect((await mainConfigFile(ctx('tofu'), exists('/home/u/.terraformrc'))).path).toBe('/home/u/.terraformrc');
    expect((await mainConfigFile(ctx('tofu'), exists('/home/u/.terraformrc', '/home/u/.tofurc'))).path).toBe(
      '/home/u/.tofurc',
    );
    expect((await mainConfigFile(ctx('tofu', { XDG_CONFIG_HOME: '/xdg' }), exists())).path).toBe(
      '/xdg/opentofu/tofurc',
    );
    expect((await mainConfigFile(ctx('tofu', { XDG_CONFIG_HOME: '/xdg' }), exists('/home/u/.terraformrc'))).path).toBe(
      '/home/u/.terraformrc',
    );
    expect((await mainConfigFile(ctx('tofu', { APPDATA: 'C:\\AD' }, 'windows'), exists())).path).toBe(
      'C:\\AD\\tofu.rc',
    );
    expect(
      (await mainConfigFile(ctx('tofu', { APPDATA: 'C:\\AD' }, 'windows'), exists('C:\\AD\\terraform.rc'))).path,
    ).toBe('C:\\AD\\terraform.rc');
  });

  it('uses the injected home directory when HOME is unset', async () => {
    expect((await mainConfigFile({ ...ctx('terraform'), env: {} }, exists())).path).toBe('/home/fallback/.terraformrc');
  });
});

describe('the config and plugin directories', () => {
  it('are ~/.terraform.d, or for OpenTofu the XDG directories when it does not exist', async () => {
    expect(await configDirectory(ctx('terraform', { XDG_CONFIG_HOME: '/xdg' }), exists())).toBe('/home/u/.terraform.d');
    expect(await configDirectory(ctx('tofu', { XDG_CONFIG_HOME: '/xdg' }), exists())).toBe('/xdg/opentofu');
    expect(await configDirectory(ctx('tofu', { XDG_CONFIG_HOME: '/xdg' }), exists('/home/u/.terraform.d'))).toBe(
      '/home/u/.terraform.d',
    );
    expect(await pluginDirectory(ctx('tofu', { XDG_DATA_HOME: '/data' }), exists())).toBe('/data/opentofu');
    expect(await pluginDirectory(ctx('terraform', { XDG_DATA_HOME: '/data' }), exists())).toBe('/home/u/.terraform.d');
    expect(await configDirectory(ctx('tofu', { APPDATA: 'C:\\AD' }, 'windows'), exists())).toBe('C:\\AD\\terraform.d');
  });
});

describe('the implied local mirror directories', () => {
  it('are, for Terraform on Linux, the list terraform 1.11.4 logs', async () => {
    // TF_LOG=debug with HOME=/home/u: "ignoring non-existing provider search directory ..." for
    // terraform.d/plugins, ~/.terraform.d/plugins, ~/.local/share/terraform/plugins,
    // /usr/local/share/terraform/plugins, /usr/share/terraform/plugins.
    expect(await impliedMirrorCandidates(ctx('terraform'), exists())).toEqual([
      '/work/terraform.d/plugins',
      '/home/u/.terraform.d/plugins',
      '/home/u/.local/share/terraform/plugins',
      '/usr/local/share/terraform/plugins',
      '/usr/share/terraform/plugins',
    ]);
    // With XDG_DATA_HOME=/xdgdata XDG_DATA_DIRS=/d1:/d2 (also as terraform 1.11.4 logs them):
    expect(userDataPluginDirs(ctx('terraform', { XDG_DATA_HOME: '/xdgdata', XDG_DATA_DIRS: '/d1:/d2' }))).toEqual([
      '/xdgdata/terraform/plugins',
      '/d1/terraform/plugins',
      '/d2/terraform/plugins',
    ]);
  });

  it('use the OpenTofu plugin directory when ~/.terraform.d does not exist', async () => {
    expect((await impliedMirrorCandidates(ctx('tofu', { XDG_DATA_HOME: '/data' }), exists()))[1]).toBe(
      '/data/opentofu/plugins',
    );
  });

  it('follow macOS and Windows conventions', async () => {
    expect(await impliedMirrorCandidates(ctx('terraform', {}, 'darwin'), exists())).toEqual([
      '/work/terraform.d/plugins',
      '/home/u/.terraform.d/plugins',
      '/home/u/Library/Application Support/io.terraform/plugins',
      '/Library/Application Support/io.terraform/plugins',
    ]);
    expect(
      await impliedMirrorCandidates({ ...ctx('tofu', { APPDATA: 'C:\\AD' }, 'windows'), cwd: 'C:\\work' }, exists()),
    ).toEqual([
      'C:\\work\\terraform.d\\plugins',
      'C:\\AD\\terraform.d\\plugins',
      'C:\\AD\\HashiCorp\\Terraform\\plugins',
    ]);
  });
});
