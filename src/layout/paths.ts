/**
 * Mirror and cache path conventions, as the reference writes them. Pure:
 * strings in, strings out.
 *
 * Paths use the display (Unicode) host with its port (docs/reference.md §5.1 item 74,
 * §6.2 item 96) and `/` separators; callers join them onto a base directory.
 * Every component goes through `pathComponent` (addresses/names.ts): a name
 * that is not a plain name is refused here, whatever let it in.
 */
import {
  parsePlatform,
  pathComponent,
  type Platform,
  ProviderAddress,
  tryHostnameForComparison,
  tryParseProviderPart,
  tryParseVersion,
  type Version,
} from '../addresses/index.js';

/** `terraform-provider-TYPE_VERSION_OS_ARCH.zip` (the packed layout's file name). @throws UNSAFE_NAME */
export function packedFileName(provider: ProviderAddress, version: Version, platform: Platform): string {
  return pathComponent(
    `terraform-provider-${provider.type}_${version.toString()}_${platform.os}_${platform.arch}.zip`,
    'package file name',
  );
}

/**
 * The version and platform a packed archive's file name gives for a
 * provider of type `type` (`terraform-provider-TYPE_VERSION_OS_ARCH.zip`,
 * matched case-insensitively as filesystem mirrors match it,
 * docs/reference.md §10 item 143), or undefined when it is not one.
 */
export function parsePackedFileName(type: string, name: string): { version: Version; platform: Platform } | undefined {
  const lower = name.toLowerCase();
  const prefix = `terraform-provider-${type}_`;
  if (!lower.startsWith(prefix) || !lower.endsWith('.zip')) return undefined;
  const parts = lower.slice(prefix.length, -'.zip'.length).split('_');
  if (parts.length !== 3) return undefined;
  const version = tryParseVersion(parts[0]!);
  if (!version.ok) return undefined;
  try {
    return { version: version.version, platform: parsePlatform(`${parts[1]!}_${parts[2]!}`) };
  } catch {
    return undefined;
  }
}

/**
 * The version of a network mirror's `VERSION.json` name, when VERSION is a
 * version in canonical form (what clients request, docs/reference.md §4.3
 * item 66); else undefined.
 */
export function versionOfDocumentName(file: string): Version | undefined {
  if (!file.endsWith('.json')) return undefined;
  const text = file.slice(0, -'.json'.length);
  const parsed = tryParseVersion(text);
  return parsed.ok && parsed.version.toString() === text ? parsed.version : undefined;
}

/** What a network mirror request names: one of the protocol's three documents of one provider. */
export type MirrorRequest =
  | { readonly kind: 'index'; readonly provider: ProviderAddress }
  | { readonly kind: 'version'; readonly provider: ProviderAddress; readonly version: Version }
  | {
      readonly kind: 'archive';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
    };

/**
 * The document a network mirror request `HOST/NAMESPACE/TYPE/FILE` asks
 * for (decoded path segments; HOST in either form): `index.json`,
 * `VERSION.json` or a packed archive (docs/reference.md §4.3 items 65–67),
 * or undefined for anything else. The one reading of the protocol's paths,
 * for `serve` (serve/catalog.ts) and the pull-through mirror
 * (pull-through/service.ts).
 */
export function parseMirrorRequest(
  hostGiven: string,
  nsGiven: string,
  typeGiven: string,
  file: string,
): MirrorRequest | undefined {
  const host = tryHostnameForComparison(hostGiven);
  const ns = tryParseProviderPart(nsGiven);
  const type = tryParseProviderPart(typeGiven);
  if (!host.ok || !ns.ok || !type.ok) return undefined;
  const provider = new ProviderAddress(host.hostname, ns.value, type.value);
  if (file === 'index.json') return { kind: 'index', provider };
  const version = versionOfDocumentName(file);
  if (version !== undefined) return { kind: 'version', provider, version };
  const packed = parsePackedFileName(provider.type, file);
  return packed === undefined ? undefined : { kind: 'archive', provider, ...packed };
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
