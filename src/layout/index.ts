/**
 * Mirror and cache path conventions and the network-mirror JSON documents,
 * as the reference writes them. Pure: strings in, strings out.
 *
 * Paths use the display (Unicode) host with its port (docs/reference.md §5.1 item 74,
 * §6.2 item 96) and `/` separators; callers join them onto a base directory.
 * Every component goes through `pathComponent` (addresses/names.ts): a name
 * that is not a plain name is refused here, whatever let it in.
 */
import { pathComponent, type Platform, type ProviderAddress, type Version } from '../addresses/index.js';
import { type GoJSON, goMarshalIndent } from '../go/index.js';

/** `terraform-provider-TYPE_VERSION_OS_ARCH.zip` (the packed layout's file name). @throws UNSAFE_NAME */
export function packedFileName(provider: ProviderAddress, version: Version, platform: Platform): string {
  return pathComponent(
    `terraform-provider-${provider.type}_${version.toString()}_${platform.os}_${platform.arch}.zip`,
    'package file name',
  );
}

/** `HOST/NS/TYPE`, relative, with the display host. @throws UNSAFE_NAME */
export function providerDirPath(provider: ProviderAddress): string {
  return [
    pathComponent(provider.displayHostname, 'provider host'),
    pathComponent(provider.namespace, 'provider namespace'),
    pathComponent(provider.type, 'provider type'),
  ].join('/');
}

/** `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`, relative. */
export function packedFilePath(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `${providerDirPath(provider)}/${packedFileName(provider, version, platform)}`;
}

/** `HOST/NS/TYPE/VERSION`, relative. @throws UNSAFE_NAME */
export function versionDirPath(provider: ProviderAddress, version: Version): string {
  return `${providerDirPath(provider)}/${pathComponent(version.toString(), 'version')}`;
}

/** `HOST/NS/TYPE/VERSION/OS_ARCH`, relative (`UnpackedDirectoryPathForPackage`). @throws UNSAFE_NAME */
export function unpackedDirPath(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `${versionDirPath(provider, version)}/${pathComponent(platform.toString(), 'platform')}`;
}

/**
 * The file name of a package downloaded into a work directory: `[PREFIX-]FILENAME`,
 * the file name as the source names it (a registry's `filename`, the last
 * segment of a mirror's URL), which must be a plain name. @throws UNSAFE_NAME
 */
export function downloadName(filename: string, prefix?: string | number): string {
  const name = pathComponent(filename, 'package file name');
  return prefix === undefined ? name : `${String(prefix)}-${name}`;
}

/** `HOST/NS/TYPE/index.json`: `{"versions":{"<v>":{}}}`. */
export function mirrorIndexJSON(versions: Iterable<Version>): string {
  const map: Record<string, GoJSON> = {};
  for (const v of versions) map[v.toString()] = {};
  return goMarshalIndent({ versions: map });
}

export interface MirrorArchive {
  readonly platform: Platform;
  /** Sorted by the caller's rules; written as given. */
  readonly hashes: readonly string[];
  /** Relative to the VERSION.json URL (the bare file name when written by `providers mirror`). */
  readonly url: string;
}

/** `HOST/NS/TYPE/VERSION.json`: `{"archives":{"<os_arch>":{"hashes":[…],"url":"…"}}}`. */
export function mirrorVersionJSON(archives: Iterable<MirrorArchive>): string {
  const map: Record<string, GoJSON> = {};
  for (const a of archives) map[a.platform.toString()] = { hashes: [...a.hashes], url: a.url };
  return goMarshalIndent({ archives: map });
}
