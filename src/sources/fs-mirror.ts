/**
 * The filesystem mirror source (docs/reference.md §4.2 items 59–63; OpenTofu
 * `filesystem_search.go` `SearchLocalDirectory`, `filesystem_mirror_source.go`).
 *
 * Two layouts, freely mixed under one base directory, with `HOST` in display
 * form (Unicode, `:port` kept):
 * - unpacked: `HOST/NS/TYPE/VERSION/OS_ARCH/` (a directory);
 * - packed: `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip` (a file),
 *   the name matched case-insensitively (docs/reference.md §10 item 143).
 *
 * Scan rules, as the reference's `filepath.Walk`:
 * - the base directory may be a symlink (resolved first); below it nothing is
 *   followed while walking, except that a symlink at depth 4 to a file is a
 *   packed package and a symlink at depth 5 to a directory is an unpacked one;
 *   a symlink at depth 1–2 is ignored with a warning;
 * - HOST must pass `svchost.ForComparison` (so punycode directory names are
 *   rejected), NS and TYPE `ParseProviderPart` (upper case accepted and
 *   normalised), `-` as NS only on the flavor's default host;
 * - VERSION by `ParseVersion` (lenient: `2.0` is 2.0.0), OS_ARCH by
 *   `ParsePlatform` (case-sensitive for unpacked directories; packed names are
 *   lower-cased first, and parts after the third `_` are ignored);
 * - anything else (other files, `index.json`, `.lock` files) is skipped,
 *   invalid names with a warning event, never an error; but **any** I/O error
 *   during the walk fails the whole source (`cannot search PATH: …`), as in
 *   the reference.
 *
 * The directory is scanned once per source object, on first use, then
 * cached. Packages carry no authentication: they are checked only against the
 * lock file (docs/reference.md §4.2 item 62).
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';

import {
  compareVersions,
  defaultRegistryHost,
  LEGACY_NAMESPACE,
  parsePlatform,
  ProviderAddress,
  sortPlatforms,
  tryHostnameForComparison,
  tryParseProviderPart,
  tryParseVersion,
  type Flavor,
  type Platform,
  type Version,
} from '../addresses/index.js';
import { ErrorCode, systemErrorCode, errorText } from '../errors.js';
import { compareBytewise, goQuote } from '../go/index.js';
import { platformNotSupported, sourceError, type AvailableVersions, type PackageMeta, type Source } from './source.js';

/** A skipped entry of the scan (the reference logs these at WARN). */
export interface ScanWarning {
  /** The skipped file or directory, as the scan found it under the mirror directory. */
  readonly path: string;
  /** Why it was skipped: one sentence, in the reference's words where it logs the same skip. */
  readonly message: string;
}

/**
 * Where a {@link FilesystemMirrorSource} reads: a mirror directory in the packed (`HOST/NS/TYPE/terraform-provider-
 * TYPE_VERSION_OS_ARCH.zip`) or unpacked (`HOST/NS/TYPE/VERSION/OS_ARCH/`) layout.
 */
export interface FilesystemMirrorOptions {
  /** The mirror's base directory (may be a symlink). */
  readonly baseDir: string;
  /** Decides the default registry host, where the legacy `-` namespace is allowed. */
  readonly flavor: Flavor;
  /** Called for every skipped entry worth reporting. */
  readonly onWarning?: (w: ScanWarning) => void;
}

interface Found {
  provider: ProviderAddress;
  version: Version;
  platform: Platform;
  meta: PackageMeta;
}

/** See the module comment. */
export class FilesystemMirrorSource implements Source {
  private scanned: Promise<Map<string, Found[]>> | undefined;
  /** {@link providerOfDir}'s answers, by `HOST/NAMESPACE/TYPE` as spelled on disk. */
  private readonly providerDirs = new Map<string, ProviderAddress | undefined>();

  /**
   * A source over the mirror at `options.baseDir`; nothing is read until a method is called (the directory is
   * scanned once, then).
   */
  constructor(private readonly options: FilesystemMirrorOptions) {}

  /** {@inheritDoc Source.forDisplay} */
  forDisplay(): string {
    return this.options.baseDir;
  }

  /**
   * The distinct versions found for `provider`, sorted; an empty list (not an
   * error) when there are none, as the reference. For OpenTofu a 0.0.0
   * package adds its warning (opentofu/opentofu
   * `internal/getproviders/filesystem_mirror_source.go`); Terraform's source
   * has no such warning and says nothing (confirmed with terraform 1.11.4).
   *
   * @throws {ProvkitError} `IO`/`NOT_FOUND` when the scan fails.
   */
  async availableVersions(provider: ProviderAddress): Promise<AvailableVersions> {
    const all = await this.scan();
    const found = all.get(provider.toComparisonString()) ?? [];
    const distinct = new Map<string, Version>();
    for (const f of found) distinct.set(f.version.toString(), f.version);
    const versions = [...distinct.values()].sort(compareVersions);
    const warnings: string[] = [];
    if (this.options.flavor === 'tofu' && versions.some((v) => v.toString() === '0.0.0')) {
      warnings.push(
        `Provider ${provider.toString()} has an unspecified (0.0.0) version available in the filesystem mirror, source at ${this.options.baseDir}. It will not be used. \n` +
          'If the version 0.0.0 is intended to represent a non-published provider, consider using dev_overrides - https://opentofu.org/docs/cli/config/config-file/#development-overrides-for-provider-developers',
      );
    }
    return { versions, warnings };
  }

  /**
   * The first package for exactly (provider, version, platform) in scan order
   * (an unpacked directory wins over a packed file of the same package,
   * because `VERSION/` sorts before `terraform-provider-…`).
   *
   * @throws {ProvkitError} `PLATFORM_NOT_SUPPORTED` when there is none; scan errors.
   */
  async packageMeta(provider: ProviderAddress, version: Version, platform: Platform): Promise<PackageMeta> {
    const all = await this.scan();
    const match = (all.get(provider.toComparisonString()) ?? []).find(
      (f) => f.version.equals(version) && f.platform.equals(platform),
    );
    if (match === undefined) {
      throw platformNotSupported(
        `provider ${provider.toString()} ${version.toString()} is not available for ${platform.toString()} in the filesystem mirror at ${this.options.baseDir}`,
        { provider, version, platform, file: this.options.baseDir },
        await this.localPlatforms(provider, version),
      );
    }
    return match.meta;
  }

  /** The platforms of the packages found for (provider, version), sorted (scan errors reject). */
  async localPlatforms(provider: ProviderAddress, version: Version): Promise<Platform[]> {
    const all = await this.scan();
    const out: Platform[] = [];
    for (const f of all.get(provider.toComparisonString()) ?? []) {
      if (f.version.equals(version) && !out.some((p) => p.equals(f.platform))) out.push(f.platform);
    }
    return sortPlatforms(out);
  }

  private scan(): Promise<Map<string, Found[]>> {
    this.scanned ??= this.walkAll();
    return this.scanned;
  }

  private warn(path: string, message: string): void {
    this.options.onWarning?.({ path, message });
  }

  /** The platform named in a mirror path, or undefined after a warning (the path is ignored, as the reference does). */
  private platformOrWarn(full: string, platformStr: string): Platform | undefined {
    try {
      return parsePlatform(platformStr);
    } catch (err) {
      this.warn(
        full,
        `ignoring local provider path ${goQuote(full)} with invalid platform ${goQuote(platformStr)}: ${errorText(err)}`,
      );
      return undefined;
    }
  }

  private async walkAll(): Promise<Map<string, Found[]>> {
    let base = this.options.baseDir;
    try {
      base = await realpath(base);
    } catch {
      // As the reference: keep the given path; the walk reports the problem.
    }
    const found = new Map<string, Found[]>();
    try {
      await lstat(base);
    } catch (err) {
      const e = this.walkError(base, err);
      // The mirror itself is missing: one cause for every provider (src/installer/causes.ts).
      if (systemErrorCode(err) !== 'ENOENT' && systemErrorCode(err) !== 'ENOTDIR') throw e;
      throw sourceError(ErrorCode.NOT_FOUND, e.message, {
        file: base,
        summary: 'Mirror directory not found',
        detail: `The filesystem mirror directory ${this.options.baseDir} does not exist.`,
        hint: 'Give the directory of a filesystem mirror: the one that holds HOSTNAME/NAMESPACE/TYPE/ (as provkit mirror and terraform providers mirror write it).',
        cause: err,
      });
    }
    await this.walkDir(base, [], found);
    for (const list of found.values()) {
      // Go sort.Stable by (version, platform) within a provider.
      list.sort((a, b) => compareVersions(a.version, b.version) || comparePlatformsOf(a, b));
    }
    return found;
  }

  private walkError(path: string, err: unknown): Error {
    return sourceError(
      systemErrorCode(err) === 'ENOENT' ? ErrorCode.NOT_FOUND : ErrorCode.IO,
      `cannot search ${path}: ${errorText(err)}`,
      {
        file: path,
        cause: err,
      },
    );
  }

  /**
   * `filepath.Walk` below `dir` (whose path relative to the base is `rel`), in
   * byte order. Each entry's type (directory, symlink) is what Walk's lstat
   * gives; it comes with the directory listing (the file system's d_type,
   * Node lstat'ing an entry itself where the file system gives none), so a
   * directory costs one round trip to the I/O threads, not one per entry (a
   * tiny lock's mirror walk was a chain of ~30 of them; bench/PROFILE.md
   * "Stop 26"). Entries are visited in order, so the warnings, the first
   * error and what is found are those of the sequential walk.
   */
  private async walkDir(dir: string, rel: readonly string[], found: Map<string, Found[]>): Promise<void> {
    let entries: Dirent[];
    try {
      entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => compareBytewise(a.name, b.name));
    } catch (err) {
      throw this.walkError(dir, err);
    }
    for (const entry of entries) {
      const name = entry.name;
      const full = join(dir, name);
      const parts = [...rel, name];
      const isSymlink = entry.isSymbolicLink();
      const isDir = entry.isDirectory();
      // eslint-disable-next-line no-await-in-loop -- a walk in order, like filepath.Walk
      await this.visit(full, parts, isSymlink, isDir, found);
      if (isDir && !isSymlink) {
        // eslint-disable-next-line no-await-in-loop -- a walk in order, like filepath.Walk
        await this.walkDir(full, parts, found);
      }
    }
  }

  /** The body of the reference's walk callback for one entry. */
  private async visit(
    full: string,
    parts: readonly string[],
    isSymlink: boolean,
    /** Whether the entry itself (not a link's target) is a directory. */
    isDirEntry: boolean,
    found: Map<string, Found[]>,
  ): Promise<void> {
    if (parts.length < 3) {
      if (isSymlink)
        this.warn(
          full,
          `Provider plugin search ignored symlink ${full}: only the base directory ${this.options.baseDir} may be a symlink`,
        );
      return;
    }
    const provider = this.providerOfDir(full, parts);
    if (provider === undefined || (parts.length !== 4 && parts.length !== 5)) return;

    // The reference stats the path (following a link); for anything but a
    // link, the entry's type from the walk already says the same.
    let isDir = isDirEntry;
    try {
      if (isSymlink) isDir = (await stat(full)).isDirectory();
    } catch (err) {
      this.warn(full, `failed to read metadata about ${full}: ${errorText(err)}`);
      return;
    }

    if (parts.length === 5) {
      if (!isDir) return;
      const versionStr = parts[3] ?? '';
      const version = tryParseVersion(versionStr);
      if (!version.ok) {
        this.warn(
          full,
          `ignoring local provider path ${goQuote(full)} with invalid version ${goQuote(versionStr)}: ${version.error.message}`,
        );
        return;
      }
      const platform = this.platformOrWarn(full, parts[4] ?? '');
      if (!platform) return;
      this.add(found, provider, version.version, platform, {
        filename: `terraform-provider-${provider.type}_${version.version.toString()}_${platform.toString()}.zip`,
        location: { kind: 'local-dir', path: full },
      });
      return;
    }

    // Depth 4: a packed archive.
    if (isDir) return;
    const filename = parts[3] ?? '';
    const norm = filename.toLowerCase();
    // A packed mirror's own index files (`index.json`, `VERSION.json`, as
    // `providers mirror` writes them beside the archives) are not packages
    // and are not worth a warning: docs/reference.md §4.2 item 63.
    if (norm === 'index.json' || (norm.endsWith('.json') && tryParseVersion(filename.slice(0, -'.json'.length)).ok))
      return;
    const prefix = `terraform-provider-${provider.type}_`;
    const rel = parts.join('/');
    if (!norm.startsWith(prefix)) {
      this.warn(
        full,
        `ignoring file ${goQuote(rel)} as possible package for ${provider.toString()}: filename lacks expected prefix ${goQuote(prefix)}`,
      );
      return;
    }
    if (!norm.endsWith('.zip')) {
      this.warn(
        full,
        `ignoring file ${goQuote(rel)} as possible package for ${provider.toString()}: filename lacks expected suffix ".zip"`,
      );
      return;
    }
    const info = norm.slice(prefix.length, norm.length - '.zip'.length).split('_');
    if (info.length < 3) {
      this.warn(
        full,
        `ignoring file ${goQuote(rel)} as possible package for ${provider.toString()}: filename does not include version number and target platform`,
      );
      return;
    }
    const versionStr = info[0] ?? '';
    const version = tryParseVersion(versionStr);
    if (!version.ok) {
      this.warn(
        full,
        `ignoring local provider path ${goQuote(full)} with invalid version ${goQuote(versionStr)}: ${version.error.message}`,
      );
      return;
    }
    const platform = this.platformOrWarn(full, `${info[1] ?? ''}_${info[2] ?? ''}`);
    if (!platform) return;
    this.add(found, provider, version.version, platform, {
      filename: norm,
      location: { kind: 'local-archive', path: full },
    });
  }

  /**
   * The provider of a directory `HOST/NAMESPACE/TYPE` (the first three
   * `parts`), or undefined (with the reference's warning, given once, at the
   * directory itself) when it names none. Resolved once per directory: the
   * walk visits the directory before anything in it, and a hostname's IDNA
   * mapping is the costly part (a mirror has thousands of entries below a
   * handful of these directories).
   */
  private providerOfDir(full: string, parts: readonly string[]): ProviderAddress | undefined {
    const key = `${parts[0] ?? ''}/${parts[1] ?? ''}/${parts[2] ?? ''}`;
    if (this.providerDirs.has(key)) return this.providerDirs.get(key);
    const provider = this.resolveProviderDir(full, parts);
    this.providerDirs.set(key, provider);
    return provider;
  }

  private resolveProviderDir(full: string, parts: readonly string[]): ProviderAddress | undefined {
    const [hostGiven = '', namespace = '', typeName = ''] = parts;
    if (namespace !== LEGACY_NAMESPACE && !tryParseProviderPart(namespace).ok) {
      if (parts.length === 3)
        this.warn(
          full,
          `local provider path ${goQuote(full)} contains invalid namespace ${goQuote(namespace)}; ignoring`,
        );
      return undefined;
    }
    const type = tryParseProviderPart(typeName);
    if (!type.ok) {
      if (parts.length === 3)
        this.warn(full, `local provider path ${goQuote(full)} contains invalid type ${goQuote(typeName)}; ignoring`);
      return undefined;
    }
    const host = tryHostnameForComparison(hostGiven);
    if (!host.ok) {
      if (parts.length === 3)
        this.warn(
          full,
          `local provider path ${goQuote(full)} contains invalid hostname ${goQuote(hostGiven)}; ignoring`,
        );
      return undefined;
    }
    let provider: ProviderAddress;
    if (namespace === LEGACY_NAMESPACE) {
      if (host.hostname !== defaultRegistryHost(this.options.flavor)) {
        if (parts.length === 3)
          this.warn(
            full,
            `local provider path ${goQuote(full)} indicates a legacy provider not on the default registry host; ignoring`,
          );
        return undefined;
      }
      provider = new ProviderAddress(host.hostname, LEGACY_NAMESPACE, type.value);
    } else {
      const ns = tryParseProviderPart(namespace);
      provider = new ProviderAddress(host.hostname, ns.ok ? ns.value : namespace, type.value);
    }
    return provider;
  }

  private add(
    found: Map<string, Found[]>,
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    where: Pick<PackageMeta, 'filename' | 'location'>,
  ): void {
    const key = provider.toComparisonString();
    let list = found.get(key);
    if (!list) {
      list = [];
      found.set(key, list);
    }
    list.push({
      provider,
      version,
      platform,
      meta: { provider, version, platform, ...where, reportedHashes: [], warnings: [], source: this.options.baseDir },
    });
  }
}

function comparePlatformsOf(a: Found, b: Found): number {
  return compareBytewise(a.platform.os, b.platform.os) || compareBytewise(a.platform.arch, b.platform.arch);
}
