/**
 * Mirror and cache path conventions and the network-mirror JSON documents,
 * as the reference writes them. Pure: strings in, strings out.
 *
 * Paths use the display (Unicode) host with its port (docs/reference.md §5.1 item 74,
 * §6.2 item 96) and `/` separators; callers join them onto a base directory.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { type GoJSON, goMarshalIndent } from '../go/index.js';

/** `terraform-provider-TYPE_VERSION_OS_ARCH.zip` (the packed layout's file name). */
export function packedFileName(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `terraform-provider-${provider.type}_${version.toString()}_${platform.os}_${platform.arch}.zip`;
}

/** `HOST/NS/TYPE`, relative, with the display host. */
export function providerDirPath(provider: ProviderAddress): string {
  return `${provider.displayHostname}/${provider.namespace}/${provider.type}`;
}

/** `HOST/NS/TYPE/terraform-provider-TYPE_VERSION_OS_ARCH.zip`, relative. */
export function packedFilePath(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `${providerDirPath(provider)}/${packedFileName(provider, version, platform)}`;
}

/** `HOST/NS/TYPE/VERSION/OS_ARCH`, relative (`UnpackedDirectoryPathForPackage`). */
export function unpackedDirPath(provider: ProviderAddress, version: Version, platform: Platform): string {
  return `${providerDirPath(provider)}/${version.toString()}/${platform.toString()}`;
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
