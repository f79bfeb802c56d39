/**
 * Where the CLI configuration lives, per flavor and operating system
 * (`cliconfig/cliconfig.go`, `config_unix.go`, `config_windows.go`,
 * `cmd/tofu/provider_source.go`, go-userdirs; docs/reference.md §7 items 97 and 100):
 *
 * - the main file: `TF_CLI_CONFIG_FILE`, else `TERRAFORM_CONFIG` (then it must
 *   exist); otherwise
 *   - OpenTofu, Unix: `~/.tofurc`, or `~/.terraformrc` if only that exists, or
 *     `$XDG_CONFIG_HOME/opentofu/tofurc` when neither exists and
 *     `XDG_CONFIG_HOME` is set; Windows: `%APPDATA%\tofu.rc` (legacy
 *     `terraform.rc`);
 *   - Terraform: `~/.terraformrc`; Windows `%APPDATA%\terraform.rc`;
 * - the config directory, whose `*.tfrc` and `*.tfrc.json` files are read too
 *   (not when the main file comes from the environment): `~/.terraform.d`
 *   (OpenTofu: `$XDG_CONFIG_HOME/opentofu` when `~/.terraform.d` does not exist
 *   and `XDG_CONFIG_HOME` is set); Windows `%APPDATA%\terraform.d`;
 * - the implied local mirror directories, used when there is no
 *   `provider_installation` block: `terraform.d/plugins` in the working
 *   directory, the plugin directory's `plugins` (`~/.terraform.d/plugins`, or
 *   for OpenTofu `$XDG_DATA_HOME/opentofu/plugins` when `~/.terraform.d` does
 *   not exist and `XDG_DATA_HOME` is set), then go-userdirs' data paths for
 *   ("Terraform", "HashiCorp", "io.terraform") + `plugins`.
 *
 * The spec lists `~/.terraform.d/plugins` and `$XDG_DATA_HOME/opentofu/plugins`
 * as two entries; the code it cites (`PluginDir()`) yields one or the other,
 * which is what this module does.
 *
 * Pure: the environment, home directory, platform and an existence test are
 * arguments.
 */
import { posix, win32 } from 'node:path';

import type { Flavor } from '../addresses/index.js';

/** The operating system, as Go's `GOOS` names it (only `windows` and `darwin` are special). */
export type HostOS =
  'linux' | 'darwin' | 'windows' | 'freebsd' | 'openbsd' | 'netbsd' | 'solaris' | 'aix' | 'dragonfly' | 'illumos';

/** Everything location logic depends on, injected. */
export interface CliConfigContext {
  /** The flavor, whose file names and variables apply (`.tofurc` and `TF_CLI_CONFIG_FILE`, or `.terraformrc`). */
  readonly flavor: Flavor;
  /** The process environment (`TF_CLI_CONFIG_FILE`, `HOME`, `XDG_*`, `APPDATA`, `TF_TOKEN_*`, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The user's home directory, used when `HOME` is not set (Go: `user.Current`). */
  readonly homeDir: string;
  /** The operating system, whose default locations apply (`%APPDATA%` on Windows, `$HOME` elsewhere). */
  readonly os: HostOS;
  /** The working directory (for `terraform.d/plugins`). */
  readonly cwd: string;
}

/** Maps Node's `process.platform` to a {@link HostOS}. */
export function hostOSFromNode(platform: string): HostOS {
  switch (platform) {
    case 'win32':
      return 'windows';
    case 'sunos':
      return 'solaris';
    case 'darwin':
    case 'freebsd':
    case 'openbsd':
    case 'netbsd':
    case 'aix':
      return platform;
    default:
      return 'linux';
  }
}

function pathFor(ctx: CliConfigContext): typeof posix {
  return ctx.os === 'windows' ? win32 : posix;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** The home directory: `HOME` when set, else the injected one (Go `homeDir`). On Windows, `%APPDATA%`. */
export function homeDirectory(ctx: CliConfigContext): string {
  if (ctx.os === 'windows') return nonEmpty(ctx.env.APPDATA) ?? win32.join(ctx.homeDir, 'AppData', 'Roaming');
  return nonEmpty(ctx.env.HOME) ?? ctx.homeDir;
}

/** `TF_CLI_CONFIG_FILE`, else `TERRAFORM_CONFIG`, else `undefined` (`cliConfigFileOverride`). */
export function cliConfigFileOverride(ctx: CliConfigContext): string | undefined {
  return nonEmpty(ctx.env.TF_CLI_CONFIG_FILE) ?? nonEmpty(ctx.env.TERRAFORM_CONFIG);
}

/** Tells whether a path exists (any kind of file). */
export type Exists = (path: string) => boolean | Promise<boolean>;

/** The main CLI configuration file and whether it must exist. */
export interface MainConfigFile {
  readonly path: string;
  /** True when named by the environment: a missing file is then a warning. */
  readonly fromEnv: boolean;
}

/** `cliConfigFile` / `ConfigFile`: the main configuration file. */
export async function mainConfigFile(ctx: CliConfigContext, exists: Exists): Promise<MainConfigFile> {
  const override = cliConfigFileOverride(ctx);
  if (override !== undefined) return { path: override, fromEnv: true };
  const p = pathFor(ctx);
  const home = homeDirectory(ctx);
  if (ctx.flavor === 'terraform') {
    return { path: p.join(home, ctx.os === 'windows' ? 'terraform.rc' : '.terraformrc'), fromEnv: false };
  }
  const [newName, legacyName] = ctx.os === 'windows' ? ['tofu.rc', 'terraform.rc'] : ['.tofurc', '.terraformrc'];
  const newFile = p.join(home, newName);
  const legacyFile = p.join(home, legacyName);
  const newExists = await exists(newFile);
  const legacyExists = await exists(legacyFile);
  const xdg = nonEmpty(ctx.env.XDG_CONFIG_HOME);
  if (ctx.os !== 'windows' && xdg !== undefined && !newExists && !legacyExists) {
    // A fresh install does not use the legacy names.
    return { path: p.join(xdg, 'opentofu', 'tofurc'), fromEnv: false };
  }
  if (newExists) return { path: newFile, fromEnv: false };
  if (legacyExists) return { path: legacyFile, fromEnv: false };
  return { path: newFile, fromEnv: false };
}

/** `ConfigDir`: the directory whose `*.tfrc` / `*.tfrc.json` files are read. */
export async function configDirectory(ctx: CliConfigContext, exists: Exists): Promise<string> {
  const p = pathFor(ctx);
  const home = homeDirectory(ctx);
  if (ctx.os === 'windows') return p.join(home, 'terraform.d');
  const dir = p.join(home, '.terraform.d');
  const xdg = nonEmpty(ctx.env.XDG_CONFIG_HOME);
  if (ctx.flavor === 'tofu' && xdg !== undefined && !(await exists(dir))) return p.join(xdg, 'opentofu');
  return dir;
}

/** `PluginDir`: the directory whose `plugins` subdirectory is an implied mirror. */
export async function pluginDirectory(ctx: CliConfigContext, exists: Exists): Promise<string> {
  const p = pathFor(ctx);
  const home = homeDirectory(ctx);
  if (ctx.os === 'windows') return p.join(home, 'terraform.d');
  const dir = p.join(home, '.terraform.d');
  const xdg = nonEmpty(ctx.env.XDG_DATA_HOME);
  if (ctx.flavor === 'tofu' && xdg !== undefined && !(await exists(dir))) return p.join(xdg, 'opentofu');
  return dir;
}

/**
 * go-userdirs `ForApp("Terraform", "HashiCorp", "io.terraform").DataSearchPaths("plugins")`:
 * Linux and other Unix: `$XDG_DATA_HOME` (default `~/.local/share`) and each
 * `$XDG_DATA_DIRS` entry (default `/usr/local/share`, `/usr/share`), each +
 * `/terraform/plugins`; macOS: `~/Library/Application Support/io.terraform/plugins`
 * and `/Library/Application Support/io.terraform/plugins`; Windows:
 * `%APPDATA%\HashiCorp\Terraform\plugins`.
 */
export function userDataPluginDirs(ctx: CliConfigContext): string[] {
  const home = homeDirectory(ctx);
  if (ctx.os === 'windows') return [win32.join(home, 'HashiCorp', 'Terraform', 'plugins')];
  if (ctx.os === 'darwin') {
    const support = posix.join('Library', 'Application Support', 'io.terraform', 'plugins');
    return [posix.join(home, support), posix.join('/', support)];
  }
  const dataHome = nonEmpty(ctx.env.XDG_DATA_HOME) ?? posix.join(home, '.local', 'share');
  const dataDirs = (nonEmpty(ctx.env.XDG_DATA_DIRS) ?? '/usr/local/share:/usr/share')
    .split(':')
    .filter((d) => d !== '');
  return [dataHome, ...dataDirs].map((d) => posix.join(d, 'terraform', 'plugins'));
}

/**
 * The implied local mirror directories, in order, before the existence
 * filter (each is used only if it exists as a directory; docs/reference.md §7 item 100).
 */
export async function impliedMirrorCandidates(ctx: CliConfigContext, exists: Exists): Promise<string[]> {
  const p = pathFor(ctx);
  return [
    p.join(ctx.cwd, 'terraform.d', 'plugins'),
    p.join(await pluginDirectory(ctx, exists), 'plugins'),
    ...userDataPluginDirs(ctx),
  ];
}
