/**
 * Loading and merging the CLI configuration (`cliconfig.go` `LoadConfig`,
 * `Merge`, `Validate`, `EnvConfig`; `cmd/tofu/provider_source.go`; docs/reference.md §7
 * items 97–104):
 *
 * 1. the main file (see `locations.ts`); named by `TF_CLI_CONFIG_FILE` /
 *    `TERRAFORM_CONFIG` it must exist ("Unable to open CLI configuration
 *    file", a warning), otherwise a missing file is fine;
 * 2. unless the main file came from the environment, every `*.tfrc` and
 *    `*.tfrc.json` in the config directory, in name order;
 * 3. merged: `plugin_cache_dir` from the environment, else the main file,
 *    else the first directory file that sets it; `host` and `credentials` of
 *    later files replace earlier ones; `plugin_cache_may_break_…` is sticky;
 * 4. validated: hostnames, at most one `credentials_helper` and one
 *    `provider_installation` across all files, the plugin cache directory
 *    must exist;
 * 5. the provider installation methods: the first `provider_installation`
 *    block (invalid methods are reported and left out, as the reference
 *    does), or, with none, the implied local mirrors that exist followed by
 *    `direct`.
 *
 * A `credentials_helper` is parsed but never run: provkit reports it as not
 * supported (a warning) and uses `TF_TOKEN_*` and `credentials` blocks only.
 *
 * I/O only through {@link CliConfigFs}; the environment, home directory,
 * platform and working directory come from the {@link CliConfigContext}.
 */
import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { posix, win32 } from 'node:path';

import type { Flavor, Hostname } from '../addresses/index.js';
import { compareBytewise, goQuote, tryHostnameForComparison } from '../addresses/index.js';
import { readRegularFile } from '../fs/read.js';
import { tokensFromEnv } from './credentials.js';
import type { CliConfigContext, Exists } from './locations.js';
import {
  cliConfigFileOverride,
  configDirectory,
  hostOSFromNode,
  impliedMirrorCandidates,
  mainConfigFile,
} from './locations.js';
import type {
  CliConfig,
  CliConfigDiagnostic,
  CredentialsConfig,
  CredentialsHelperConfig,
  DevOverride,
  HostConfig,
  InstallationMethod,
  OciCredentialsBlock,
  OciDefaultCredentials,
  ProviderInstallation,
} from './model.js';
import type { CliConfigFile, RawProviderInstallation } from './parse.js';
import { parseCliConfigFile } from './parse.js';
import type { ProviderPattern } from '../addresses/index.js';
import { parseProviderPatterns } from '../addresses/index.js';
import { ErrorCode, WarningCode, errorText } from '../errors.js';

/** File-system access of the CLI configuration loader (injected in tests). */
export interface CliConfigFs {
  readFile(path: string): Promise<Uint8Array>;
  /** The names in a directory. */
  readDir(path: string): Promise<string[]>;
  /** What is at `path` (symlinks followed), or `undefined` when nothing is. */
  stat(path: string): Promise<{ isDirectory: boolean } | undefined>;
}

/** The default {@link CliConfigFs}: `node:fs/promises`. */
export const nodeCliConfigFs: CliConfigFs = {
  /** Regular files only, bounded (fs/read.ts). */
  readFile: (path) => readRegularFile(path),
  readDir: (path) => readdir(path),
  async stat(path) {
    try {
      const s = await stat(path);
      return { isDirectory: s.isDirectory() };
    } catch {
      return undefined;
    }
  },
};

/** A {@link CliConfigContext} from the running process: `process.env`, the home directory, the platform and the working directory. */
export function processCliConfigContext(flavor: Flavor): CliConfigContext {
  return { flavor, env: process.env, homeDir: homedir(), os: hostOSFromNode(process.platform), cwd: process.cwd() };
}

/** Go's `os.Expand` with a variable lookup (`$VAR`, `${VAR}`, special `$1`, `$@`, …). */
export function expandEnv(s: string, env: Readonly<Record<string, string | undefined>>): string {
  const isSpecial = (c: string): boolean => '*#$@!?-0123456789'.includes(c);
  const isAlnum = (c: string): boolean => /[A-Za-z0-9_]/.test(c);
  let out = '';
  let i = 0;
  for (let j = 0; j < s.length; j++) {
    if (s[j] !== '$' || j + 1 >= s.length) continue;
    out += s.slice(i, j);
    const rest = s.slice(j + 1);
    let name = '';
    let w = 0;
    if (rest[0] === '{') {
      if (rest.length > 2 && isSpecial(rest[1] ?? '') && rest[2] === '}') {
        name = rest[1] ?? '';
        w = 3;
      } else {
        const close = rest.indexOf('}', 1);
        if (close === -1) w = 1;
        else if (close === 1) w = 2;
        else {
          name = rest.slice(1, close);
          w = close + 1;
        }
      }
    } else if (isSpecial(rest[0] ?? '')) {
      name = rest[0] ?? '';
      w = 1;
    } else {
      while (w < rest.length && isAlnum(rest[w] ?? '')) w++;
      name = rest.slice(0, w);
    }
    if (name === '' && w === 0) out += '$';
    else if (name !== '') out += env[name] ?? '';
    j += w;
    i = j + 1;
  }
  return out + s.slice(i);
}

/** Go's `filepath.Match("*.tfrc" / "*.tfrc.json", name)` for a plain file name. */
function isConfigDirFile(name: string): boolean {
  return !name.includes('/') && (name.endsWith('.tfrc') || name.endsWith('.tfrc.json'));
}

/**
 * The problem with a network mirror URL, if any: it must parse and be `https:`
 * with a host (`providerSourceForCLIConfigLocation`).
 */
function networkMirrorURLProblem(url: string): string | undefined {
  if (/^https:\/\/[^/?#]/i.test(url)) {
    try {
      new URL(url);
      return undefined;
    } catch {
      return `Cannot parse ${goQuote(url)} as a URL for a network provider mirror: invalid URL.`;
    }
  }
  return `Cannot use ${goQuote(url)} as a URL for a network provider mirror: the mirror must be at an https: URL.`;
}

/** Loads the CLI configuration. Never throws; problems are in `diagnostics`. */
export async function loadCliConfig(ctx: CliConfigContext, fs: CliConfigFs = nodeCliConfigFs): Promise<CliConfig> {
  const diags: CliConfigDiagnostic[] = [];
  const exists: Exists = async (p) => (await fs.stat(p)) !== undefined;
  const files: CliConfigFile[] = [];
  const read = async (path: string): Promise<CliConfigFile | undefined> => {
    let bytes: Uint8Array;
    try {
      bytes = await fs.readFile(path);
    } catch (e) {
      diags.push({
        severity: 'error',
        code: ErrorCode.INVALID_CLI_CONFIGURATION,
        summary: `Error reading ${path}: ${errorText(e)}`,
        detail: '',
      });
      return undefined;
    }
    const r = parseCliConfigFile(bytes, path, ctx.flavor);
    diags.push(...r.diagnostics);
    return r.file;
  };

  // 1. The main file.
  const main = await mainConfigFile(ctx, exists);
  const mainStat = await fs.stat(main.path);
  if (mainStat) {
    const f = await read(main.path);
    if (f) files.push(f);
  } else if (main.fromEnv) {
    diags.push({
      severity: 'warning',
      code: WarningCode.CLI_CONFIGURATION_WARNING,
      summary: 'Unable to open CLI configuration file',
      detail: `The CLI configuration file at ${goQuote(main.path)} does not exist.`,
    });
  }

  // 2. The config directory, unless the environment named the main file.
  if (cliConfigFileOverride(ctx) === undefined) {
    const dir = await configDirectory(ctx, exists);
    if ((await fs.stat(dir))?.isDirectory === true) {
      let names: string[] = [];
      try {
        names = await fs.readDir(dir);
      } catch (e) {
        diags.push({
          severity: 'error',
          code: ErrorCode.INVALID_CLI_CONFIGURATION,
          summary: `Error reading ${dir}: ${errorText(e)}`,
          detail: '',
        });
      }
      const paths = ctx.os === 'windows' ? win32 : posix;
      const selected = names.filter(isConfigDirFile).sort(compareBytewise);
      const loaded = await Promise.all(selected.map((n) => read(paths.join(dir, n))));
      for (const f of loaded) if (f) files.push(f);
    }
  }

  // 3. Merge.
  let pluginCacheDir: string | undefined;
  let mayBreak = false;
  const hosts = new Map<Hostname, HostConfig>();
  const credentials = new Map<Hostname, CredentialsConfig>();
  const helpers = new Map<string, CredentialsHelperConfig>();
  const installations: RawProviderInstallation[] = [];
  const ociCredentials: OciCredentialsBlock[] = [];
  const ociDefaults: OciDefaultCredentials[] = [];
  for (const f of files) {
    ociCredentials.push(...f.ociCredentials);
    ociDefaults.push(...f.ociDefaultCredentials);
    if (pluginCacheDir === undefined && f.pluginCacheDir !== undefined && f.pluginCacheDir !== '') {
      pluginCacheDir = expandEnv(f.pluginCacheDir, ctx.env);
    }
    mayBreak ||= f.pluginCacheMayBreakDependencyLockFile;
    for (const h of f.hosts) {
      const hn = tryHostnameForComparison(h.name);
      if (!hn.ok) {
        diags.push({
          severity: 'error',
          code: ErrorCode.INVALID_CLI_CONFIGURATION,
          summary: `The host ${goQuote(h.name)} block has an invalid hostname: ${hn.error}`,
          detail: '',
          ...(h.range ? { range: h.range } : {}),
        });
        continue;
      }
      hosts.set(hn.hostname, { name: h.name, hostname: hn.hostname, services: h.services });
    }
    for (const c of f.credentials) {
      const hn = tryHostnameForComparison(c.name);
      if (!hn.ok) {
        diags.push({
          severity: 'error',
          code: ErrorCode.INVALID_CLI_CONFIGURATION,
          summary: `The credentials ${goQuote(c.name)} block has an invalid hostname: ${hn.error}`,
          detail: '',
          ...(c.range ? { range: c.range } : {}),
        });
        continue;
      }
      const token = c.attributes.token;
      credentials.set(hn.hostname, {
        hostname: hn.hostname,
        attributes: c.attributes,
        ...(typeof token === 'string' ? { token } : {}),
      });
    }
    for (const h of f.credentialsHelpers) helpers.set(h.type, { type: h.type, args: h.args });
    installations.push(...f.providerInstallations);
  }

  // The environment takes precedence.
  const envCache = ctx.env.TF_PLUGIN_CACHE_DIR;
  if (envCache !== undefined && envCache !== '') pluginCacheDir = envCache;
  const envMayBreak = ctx.env.TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE;
  if (envMayBreak !== undefined && envMayBreak !== '' && envMayBreak !== '0') mayBreak = true;

  // 4. Validate.
  if (helpers.size > 1)
    diags.push({
      severity: 'error',
      code: ErrorCode.INVALID_CLI_CONFIGURATION,
      summary: 'No more than one credentials_helper block may be specified',
      detail: '',
    });
  if (installations.length > 1)
    diags.push({
      severity: 'error',
      code: ErrorCode.INVALID_CLI_CONFIGURATION,
      summary: 'No more than one provider_installation block may be specified',
      detail: '',
    });
  // OpenTofu's OCI credentials blocks (cliconfig.go Validate).
  if (ociDefaults.length > 1)
    diags.push({
      severity: 'error',
      code: ErrorCode.INVALID_CLI_CONFIGURATION,
      summary: 'No more than one oci_default_credentials block may be specified',
      detail: '',
    });
  const prefixes = new Set<string>();
  for (const c of ociCredentials) {
    if (prefixes.has(c.prefix))
      diags.push({
        severity: 'error',
        code: ErrorCode.INVALID_CLI_CONFIGURATION,
        summary: `Duplicate oci_credentials block for ${goQuote(c.prefix)}`,
        detail: '',
      });
    prefixes.add(c.prefix);
  }
  if (pluginCacheDir !== undefined && (await fs.stat(pluginCacheDir)) === undefined) {
    diags.push({
      severity: 'error',
      code: ErrorCode.INVALID_CLI_CONFIGURATION,
      summary: `The specified plugin cache dir ${pluginCacheDir} cannot be opened: stat ${pluginCacheDir}: no such file or directory`,
      detail: '',
    });
  }
  const helper = [...helpers.values()][0];
  if (helper) {
    diags.push({
      severity: 'warning',
      code: WarningCode.CLI_CONFIGURATION_WARNING,
      summary: 'Credentials helpers are not supported',
      detail: `provkit does not run credentials helper programs, so the credentials_helper ${goQuote(helper.type)} block is ignored. Give tokens with TF_TOKEN_<hostname> environment variables or credentials blocks instead.`,
    });
  }

  // 5. Provider installation.
  const first = installations[0];
  const providerInstallation = first ? explicitInstallation(first, ctx, diags) : await impliedInstallation(ctx, fs);

  return {
    files: files.map((f) => f.filename),
    ...(pluginCacheDir !== undefined ? { pluginCacheDir } : {}),
    pluginCacheMayBreakDependencyLockFile: mayBreak,
    hosts,
    credentials,
    envTokens: tokensFromEnv(ctx.env),
    ...(helper ? { credentialsHelper: helper } : {}),
    providerInstallation,
    ociCredentials,
    ...(ociDefaults[0] === undefined ? {} : { ociDefaultCredentials: ociDefaults[0] }),
    diagnostics: diags,
  };
}

/** `explicitProviderSource`: methods whose location or patterns are invalid are reported and left out. */
function explicitInstallation(
  raw: RawProviderInstallation,
  ctx: CliConfigContext,
  diags: CliConfigDiagnostic[],
): ProviderInstallation {
  const methods: InstallationMethod[] = [];
  for (const m of raw.methods) {
    const at = m.range ? { range: m.range } : {};
    if (m.kind === 'network_mirror') {
      const problem = networkMirrorURLProblem(m.url ?? '');
      if (problem !== undefined) {
        diags.push({
          severity: 'error',
          code: ErrorCode.INVALID_CLI_CONFIGURATION,
          summary: 'Invalid URL for provider installation source',
          detail: problem,
          ...at,
        });
        continue;
      }
    }
    let include: ProviderPattern[];
    let exclude: ProviderPattern[];
    try {
      include = parseProviderPatterns(m.include, ctx.flavor);
    } catch (e) {
      diags.push({
        severity: 'error',
        code: ErrorCode.INVALID_CLI_CONFIGURATION,
        summary: 'Invalid provider source inclusion patterns',
        detail: `CLI config specifies invalid provider inclusion patterns: ${errorText(e)}.`,
        ...at,
      });
      continue;
    }
    try {
      exclude = parseProviderPatterns(m.exclude, ctx.flavor);
    } catch (e) {
      diags.push({
        severity: 'error',
        code: ErrorCode.INVALID_CLI_CONFIGURATION,
        summary: 'Invalid provider source exclusion patterns',
        detail: `CLI config specifies invalid provider exclusion patterns: ${errorText(e)}.`,
        ...at,
      });
      continue;
    }
    if (m.kind === 'oci_mirror') {
      const mapping = m.repositoryMapping;
      if (mapping === undefined) continue;
      methods.push({
        kind: 'oci_mirror',
        repositoryTemplate: m.repositoryTemplate ?? '',
        repositoryFor: mapping,
        include,
        exclude,
        ...at,
      });
    } else if (m.kind === 'filesystem_mirror') {
      methods.push({ kind: 'filesystem_mirror', path: m.path ?? '', include, exclude, ...at });
    } else if (m.kind === 'network_mirror') {
      methods.push({
        kind: 'network_mirror',
        url: m.url ?? '',
        include,
        exclude,
        ...(m.downloadRetryCount !== undefined ? { downloadRetryCount: m.downloadRetryCount } : {}),
        ...(m.trustAllHashes === true ? { trustAllHashes: true } : {}),
        ...at,
      });
    } else {
      methods.push({
        kind: 'direct',
        include,
        exclude,
        ...(m.downloadRetryCount !== undefined ? { downloadRetryCount: m.downloadRetryCount } : {}),
        ...at,
      });
    }
  }
  const devOverrides = new Map<string, DevOverride>();
  for (const d of raw.devOverrides) devOverrides.set(d.provider.toString(), d);
  return { implied: false, methods, devOverrides };
}

/** `implicitProviderSource`: the implied mirrors that exist as directories, then `direct`. */
async function impliedInstallation(ctx: CliConfigContext, fs: CliConfigFs): Promise<ProviderInstallation> {
  const exists: Exists = async (p) => (await fs.stat(p)) !== undefined;
  const candidates = await impliedMirrorCandidates(ctx, exists);
  const stats = await Promise.all(candidates.map((c) => fs.stat(c)));
  const methods: InstallationMethod[] = [];
  candidates.forEach((path, i) => {
    if (stats[i]?.isDirectory === true)
      methods.push({ kind: 'filesystem_mirror', path, include: [], exclude: [], implied: true });
  });
  methods.push({ kind: 'direct', include: [], exclude: [], excludeProvidersInLocalMirrors: true });
  return { implied: true, methods, devOverrides: new Map() };
}
