/**
 * OCI registry repositories as a provider mirror: OpenTofu's `oci_mirror`
 * installation method and `tofu providers lock -oci-mirror` (opentofu/opentofu
 * internal/getproviders/oci_registry_mirror_source.go,
 * package_location_oci_blob_archive.go; docs/oci.md), read the same way:
 *
 * - a provider's repository comes from a mapping (the CLI configuration's
 *   `repository_template`, or `-oci-mirror`'s URI template);
 * - versions are the repository's tags that parse as versions, `_` read as
 *   `+`; other tags (`latest`) are ignored; a repository that does not exist
 *   means "provider not found" (the next source is asked);
 * - a version's tag must name an OCI image index whose `artifactType` is
 *   `application/vnd.opentofu.provider`; its `manifests` entries with
 *   `artifactType` `application/vnd.opentofu.provider-target` (others are
 *   ignored) must be image manifests with a `platform`; exactly one may match
 *   the wanted `os`/`architecture` (one with an `os.version` does not);
 * - that image manifest must carry the same `artifactType` and exactly one
 *   layer of media type `archive/zip`, with a `sha256:` digest, which is the
 *   package's `zh:`;
 * - manifests are read with explicit `Accept` types, at most 4 MiB, and must
 *   match their digests; the blob must have its layer's size and digest
 *   (fetch.ts), and its `h1:` is computed after download.
 *
 * The error texts are OpenTofu's. The zip's `zh:` is reported (trust
 * `reported-by-mirror`) and verified locally after the download, so a lock
 * from this source records `h1:` and `zh:` for each platform fetched, and
 * nothing for other platforms (no signatures, nothing else to trust).
 */
import type { ProviderAddress, Version } from '../addresses/index.js';
import { compareVersions, goQuote, isPlatformWord, Platform, tryParseVersion } from '../addresses/index.js';
import { ErrorCode, isProvkitError, errorText } from '../errors.js';
import { makeHash } from '../hashing/index.js';
import {
  ALL_MANIFEST_TYPES,
  MediaType,
  type OciClient,
  type OciRepository,
  parseDigest,
  type RepositoryAddress,
  tagVersion,
  versionTag,
} from '../net/index.js';
import {
  sourceError,
  withContext,
  type AvailableVersions,
  type PackageMeta,
  type Source,
  type SourceErrorContext,
} from './source.js';
import { isRecord } from '../go/index.js';

/** `artifactType` of a provider version's index (OpenTofu `ociIndexManifestArtifactType`). */
export const PROVIDER_ARTIFACT_TYPE = 'application/vnd.opentofu.provider';
/** `artifactType` of a platform's image manifest (OpenTofu `ociPackageManifestArtifactType`). */
export const PROVIDER_TARGET_ARTIFACT_TYPE = 'application/vnd.opentofu.provider-target';
/** Media type of the zip layer (OpenTofu `ociPackageMediaType`). */
export const PACKAGE_MEDIA_TYPE = 'archive/zip';
/** The module package artifact type, named in one of OpenTofu's messages. */
const MODULE_ARTIFACT_TYPE = 'application/vnd.opentofu.modulepkg';

/**
 * How an {@link OciMirrorSource} reaches an OCI registry (OpenTofu's `oci_mirror` installation method,
 * docs/oci.md).
 */
export interface OciMirrorOptions {
  /** The OCI distribution client (credentials, TLS) the source asks. */
  readonly client: OciClient;
  /**
   * The repository of a provider.
   *
   * @throws {Error} when the mapping cannot name one (its message is shown).
   */
  readonly repositoryFor: (provider: ProviderAddress) => RepositoryAddress;
}

/** An OCI descriptor as far as provkit reads one (opencontainers/image-spec descriptor.md; `platform` from image-index.md). */
export interface Descriptor {
  /** The media type of the content it points to (an image manifest's, a layer's `archive/zip`). */
  readonly mediaType: string;
  /** `ALGORITHM:HEX` of the content's bytes, as the registry must serve them; not yet checked when read. */
  readonly digest: string;
  /** The content's length in bytes, a non-negative safe integer. */
  readonly size: number;
  /** The artifact type of the manifest it points to, when given (a provider package's is {@link PROVIDER_TARGET_ARTIFACT_TYPE}). */
  readonly artifactType?: string;
  /** An index entry's platform: a provider package's `os` and `architecture` (Go's `GOOS`, `GOARCH`), each when given. */
  readonly platform?: {
    readonly os?: string;
    readonly architecture?: string;
    readonly 'os.version'?: string;
    readonly variant?: string;
  };
  /** The descriptor's annotations with string values, when given; nothing provkit decides depends on them. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/** A provider version's index, as read and checked. */
export interface ProviderIndex {
  /** The repository the index was read from (its blobs are fetched there). */
  readonly repository: OciRepository;
  /** `sha256:HEX` of {@link ProviderIndex.body}, as the version's tag resolved. */
  readonly digest: string;
  /** Every entry of its `manifests`, in order (those of other artifact types too; `selectImageManifest` picks). */
  readonly manifests: readonly Descriptor[];
  /** The raw bytes (for `verify` and the publisher's merge). */
  readonly body: Buffer;
}

/** What an OCI mirror's errors name: the provider, and the version, platform and URL where known. */
export type OciManifestContext = SourceErrorContext & { provider: ProviderAddress };

/** A descriptor from JSON, or undefined when it lacks `mediaType`, `digest` or `size`. */
export function readDescriptor(v: unknown): Descriptor | undefined {
  if (!isRecord(v)) return undefined;
  const { mediaType, digest, size, artifactType, platform, annotations } = v;
  if (
    typeof mediaType !== 'string' ||
    typeof digest !== 'string' ||
    typeof size !== 'number' ||
    !Number.isSafeInteger(size) ||
    size < 0
  )
    return undefined;
  const p = isRecord(platform) ? platform : undefined;
  return {
    mediaType,
    digest,
    size,
    ...(typeof artifactType === 'string' ? { artifactType } : {}),
    ...(p === undefined
      ? {}
      : {
          platform: {
            ...(typeof p['os'] === 'string' ? { os: p['os'] } : {}),
            ...(typeof p['architecture'] === 'string' ? { architecture: p['architecture'] } : {}),
            ...(typeof p['os.version'] === 'string' ? { 'os.version': p['os.version'] } : {}),
            ...(typeof p['variant'] === 'string' ? { variant: p['variant'] } : {}),
          },
        }),
    ...(isRecord(annotations)
      ? {
          annotations: Object.fromEntries(
            Object.entries(annotations).filter((e): e is [string, string] => typeof e[1] === 'string'),
          ),
        }
      : {}),
  };
}

/** See the module comment. */
export class OciMirrorSource implements Source {
  private readonly tags = new Map<string, Promise<AvailableVersions>>();
  private readonly indexes = new Map<string, Promise<ProviderIndex>>();

  /** A source over the OCI repositories `options.repositoryFor` names; asks nothing until a method is called. */
  constructor(private readonly options: OciMirrorOptions) {}

  /** {@inheritDoc Source.forDisplay} */
  forDisplay(provider?: ProviderAddress): string {
    if (provider !== undefined) {
      try {
        const a = this.options.repositoryFor(provider);
        return `OCI registry provider mirror ${a.registry}/${a.repository}`;
      } catch {
        // fall through
      }
    }
    return 'OCI registry provider mirror';
  }

  /** The repository of a provider (OpenTofu: `selecting OCI repository address: …`). */
  repositoryOf(provider: ProviderAddress): OciRepository {
    let addr: RepositoryAddress;
    try {
      addr = this.options.repositoryFor(provider);
    } catch (err) {
      throw sourceError(ErrorCode.INVALID_SOURCE_CONFIG, `selecting OCI repository address: ${errorText(err)}`, {
        provider,
        cause: err,
      });
    }
    if (addr.repository === '') {
      throw sourceError(
        ErrorCode.INVALID_SOURCE_CONFIG,
        `selecting OCI repository address: ${addr.registry} names a registry but no repository`,
        { provider },
      );
    }
    return this.options.client.repository(addr.registry, addr.repository);
  }

  /** {@inheritDoc Source.availableVersions} */
  availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    const key = provider.toComparisonString();
    let p = this.tags.get(key);
    if (!p) {
      p = this.listVersions(provider, signal);
      this.tags.set(key, p);
      p.catch(() => this.tags.delete(key));
    }
    return p;
  }

  private async listVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    const repo = this.repositoryOf(provider);
    let listed;
    try {
      listed = await repo.listTags(signal);
    } catch (err) {
      throw withContext(err, { provider, url: repo.url('tags/list') }, 'listing tags from OCI repository');
    }
    if (listed === undefined) {
      throw sourceError(
        ErrorCode.PROVIDER_NOT_FOUND,
        `provider ${provider.toString()} was not found in any of the search locations`,
        {
          provider,
          url: repo.url('tags/list'),
          hint: `the OCI repository ${repo.toString()} does not exist`,
        },
      );
    }
    const versions: Version[] = [];
    const seen = new Set<string>();
    for (const tag of listed.tags) {
      const v = tryParseVersion(tagVersion(tag));
      // Not a version tag (latest, a platform tag left by a manual recipe): ignored.
      if (!v.ok || seen.has(v.version.toString())) continue;
      seen.add(v.version.toString());
      versions.push(v.version);
    }
    versions.sort(compareVersions);
    return { versions, warnings: [] };
  }

  /**
   * The index a version's tag names, checked (`fetchOCIDescriptorForVersion`,
   * `fetchOCIIndexManifest`). Read once per run and version.
   */
  providerIndex(provider: ProviderAddress, version: Version, signal?: AbortSignal): Promise<ProviderIndex> {
    const key = `${provider.toComparisonString()} ${version.toString()}`;
    let p = this.indexes.get(key);
    if (!p) {
      p = this.readIndex(provider, version, signal);
      this.indexes.set(key, p);
      p.catch(() => this.indexes.delete(key));
    }
    return p;
  }

  private async readIndex(provider: ProviderAddress, version: Version, signal?: AbortSignal): Promise<ProviderIndex> {
    const repo = this.repositoryOf(provider);
    const tag = versionTag(version.toString());
    const ctx: OciManifestContext = { provider, version, url: repo.url(`manifests/${tag}`) };
    const fetched = await repo.getManifest(tag, ALL_MANIFEST_TYPES, signal).catch((err: unknown) => {
      throw withContext(err, ctx, `resolving tag ${JSON.stringify(tag)}`);
    });
    if (fetched === undefined) {
      throw sourceError(
        ErrorCode.NOT_FOUND,
        `resolving tag ${JSON.stringify(tag)}: ${repo.toString()}:${tag}: not found`,
        ctx,
      );
    }
    const doc = parseJson(fetched.body);
    const mediaType =
      fetched.mediaType ?? (isRecord(doc) && typeof doc['mediaType'] === 'string' ? doc['mediaType'] : '');
    const artifactType = isRecord(doc) && typeof doc['artifactType'] === 'string' ? doc['artifactType'] : '';
    const invalid = (message: string): Error => sourceError(ErrorCode.INVALID_RESPONSE, message, ctx);
    // The tag's own artifact type, where known, first (as OpenTofu when the registry reports it).
    if (artifactType !== '' && artifactType !== PROVIDER_ARTIFACT_TYPE) {
      if (artifactType === PROVIDER_TARGET_ARTIFACT_TYPE) {
        throw invalid(
          'tag refers directly to image manifest, but OpenTofu providers require an index manifest for multi-platform support',
        );
      }
      if (artifactType === MODULE_ARTIFACT_TYPE)
        throw invalid('selected OCI artifact is an OpenTofu module package, not a provider package');
      throw invalid(`unsupported OCI artifact type ${JSON.stringify(artifactType)}`);
    }
    if (mediaType !== MediaType.INDEX) {
      if (mediaType === MediaType.MANIFEST)
        throw invalid(
          'selected an OCI image manifest directly, but providers must be selected through a multi-platform index manifest',
        );
      if (mediaType === MediaType.DESCRIPTOR)
        throw invalid('found OCI descriptor but expected multi-platform index manifest');
      throw invalid(`unsupported media type ${JSON.stringify(mediaType)} for OCI index manifest`);
    }
    if (!isRecord(doc) || !Array.isArray(doc['manifests'] ?? []))
      throw invalid(`invalid manifest content: not an OCI index`);
    if (doc['mediaType'] !== MediaType.INDEX)
      throw invalid(
        `unexpected manifest media type ${JSON.stringify(typeof doc['mediaType'] === 'string' ? doc['mediaType'] : '')}`,
      );
    if (artifactType !== PROVIDER_ARTIFACT_TYPE)
      throw invalid(`unexpected artifact type ${JSON.stringify(artifactType)}`);
    const manifests: Descriptor[] = [];
    for (const m of (doc['manifests'] as unknown[] | undefined) ?? []) {
      const d = readDescriptor(m);
      if (d === undefined) throw invalid('invalid manifest content: an entry of "manifests" is not a descriptor');
      // A provider package's platform becomes paths and file names: plain names, or the index is refused.
      const os = d.platform?.os;
      const arch = d.platform?.architecture;
      if (d.artifactType === PROVIDER_TARGET_ARTIFACT_TYPE && (os !== undefined || arch !== undefined)) {
        if (os === undefined || arch === undefined || !isPlatformWord(os) || !isPlatformWord(arch)) {
          throw invalid(
            `invalid manifest content: an entry of "manifests" has the invalid platform ${goQuote(`${os ?? ''}_${arch ?? ''}`)}: its os and architecture must consist of lowercase letters and digits`,
          );
        }
      }
      manifests.push(d);
    }
    return { repository: repo, digest: fetched.digest, manifests, body: fetched.body };
  }

  /** {@inheritDoc Source.publishedPlatforms} */
  async publishedPlatforms(
    provider: ProviderAddress,
    version: Version,
    signal?: AbortSignal,
  ): Promise<Platform[] | undefined> {
    const index = await this.providerIndex(provider, version, signal);
    const out: Platform[] = [];
    for (const d of index.manifests) {
      if (
        d.artifactType !== PROVIDER_TARGET_ARTIFACT_TYPE ||
        d.platform?.os === undefined ||
        d.platform.architecture === undefined ||
        d.platform['os.version'] !== undefined
      )
        continue;
      // Checked when the index was read (readIndex).
      const p = new Platform(d.platform.os, d.platform.architecture);
      if (!out.some((q) => q.equals(p))) out.push(p);
    }
    return out;
  }

  /** {@inheritDoc Source.packageMeta} */
  async packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<PackageMeta> {
    const index = await this.providerIndex(provider, version, signal);
    const repo = index.repository;
    const ctx: OciManifestContext = {
      provider,
      version,
      platform,
      url: repo.url(`manifests/${versionTag(version.toString())}`),
    };
    const desc = selectImageManifest(index.manifests, provider, version, platform, ctx);
    const manifestUrl = repo.url(`manifests/${desc.digest}`);
    const mctx: OciManifestContext = { ...ctx, url: manifestUrl };
    const manifest = await this.imageManifest(repo, desc, mctx, signal);
    const layer = selectLayer(manifest, mctx);
    const digest = parseDigest(layer.digest);
    if (digest === undefined)
      throw sourceError(ErrorCode.INVALID_RESPONSE, `invalid digest ${JSON.stringify(layer.digest)}`, mctx);
    if (digest.algorithm !== 'sha256')
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `unsupported digest algorithm ${JSON.stringify(digest.algorithm)}`,
        mctx,
      );
    // checkOCIBlobDescriptor: a layer annotated with a platform must be for this one.
    if (
      layer.platform !== undefined &&
      (layer.platform.os !== platform.os || layer.platform.architecture !== platform.arch)
    ) {
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `selected OCI artifact is for ${layer.platform.os ?? ''}_${layer.platform.architecture ?? ''}, but was expected to be for ${platform.toString()}`,
        mctx,
      );
    }
    const credential = await repo.pullCredential();
    const zh = makeHash('zh:', digest.hex);
    const display = this.forDisplay(provider);
    return {
      provider,
      version,
      platform,
      filename: `terraform-provider-${provider.type}_${version.toString()}_${platform.os}_${platform.arch}.zip`,
      location: {
        kind: 'http',
        url: repo.blobUrl(layer.digest),
        headers: { accept: `${PACKAGE_MEDIA_TYPE}, */*` },
        ...(credential === undefined ? {} : { credential: () => credential }),
      },
      reportedHashes: [{ hash: zh, trust: { kind: 'reported-by-mirror', mirror: display }, platform }],
      authentication: { kind: 'oci-blob', digest: layer.digest, size: layer.size, repository: repo.toString() },
      warnings: [],
      source: display,
    };
  }

  /** `fetchOCIImageManifest`: by digest, with its media type as `Accept`; checked. */
  async imageManifest(
    repo: OciRepository,
    desc: Descriptor,
    ctx: OciManifestContext,
    signal?: AbortSignal,
  ): Promise<{ layers: Descriptor[]; raw: Record<string, unknown> }> {
    if (Math.floor(desc.size / 1024 / 1024) > 4)
      throw sourceError(ErrorCode.INVALID_RESPONSE, "manifest size exceeds OpenTofu's size limit of 4 MiB", ctx);
    const fetched = await repo.getManifest(desc.digest, [desc.mediaType], signal, desc.size).catch((err: unknown) => {
      if (isProvkitError(err, ErrorCode.INVALID_RESPONSE)) throw withContext(err, ctx);
      throw withContext(err, ctx, `fetching manifest ${desc.digest}`);
    });
    if (fetched === undefined)
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `fetching manifest ${desc.digest}: ${repo.toString()}@${desc.digest}: not found`,
        ctx,
      );
    if (fetched.digest !== desc.digest || fetched.body.length !== desc.size) {
      throw sourceError(ErrorCode.INVALID_RESPONSE, `manifest content does not match digest ${desc.digest}`, ctx);
    }
    const doc = parseJson(fetched.body);
    if (!isRecord(doc))
      throw sourceError(ErrorCode.INVALID_RESPONSE, 'invalid manifest content: not a JSON object', ctx);
    if (doc['mediaType'] === MediaType.INDEX)
      throw sourceError(ErrorCode.INVALID_RESPONSE, 'found index manifest but need image manifest', ctx);
    const mediaType = typeof doc['mediaType'] === 'string' ? doc['mediaType'] : '';
    if (mediaType !== desc.mediaType)
      throw sourceError(ErrorCode.INVALID_RESPONSE, `unexpected manifest media type ${JSON.stringify(mediaType)}`, ctx);
    const artifactType = typeof doc['artifactType'] === 'string' ? doc['artifactType'] : '';
    if (artifactType !== (desc.artifactType ?? ''))
      throw sourceError(ErrorCode.INVALID_RESPONSE, `unexpected artifact type ${JSON.stringify(artifactType)}`, ctx);
    const layers: Descriptor[] = [];
    const rawLayers = doc['layers'] ?? [];
    if (!Array.isArray(rawLayers))
      throw sourceError(ErrorCode.INVALID_RESPONSE, 'invalid manifest content: "layers" is not an array', ctx);
    for (const l of rawLayers) {
      const d = readDescriptor(l);
      if (d === undefined)
        throw sourceError(
          ErrorCode.INVALID_RESPONSE,
          'invalid manifest content: an entry of "layers" is not a descriptor',
          ctx,
        );
      layers.push(d);
    }
    return { layers, raw: doc };
  }
}

/** `selectOCIImageManifest`. */
export function selectImageManifest(
  descs: readonly Descriptor[],
  provider: ProviderAddress,
  version: Version,
  target: Platform,
  ctx: OciManifestContext,
): Descriptor {
  let found = 0;
  let wrongArtifactType = '';
  let wrongPlatform = 0;
  let selected: Descriptor | undefined;
  for (const d of descs) {
    if (d.artifactType !== PROVIDER_TARGET_ARTIFACT_TYPE) {
      if (d.artifactType !== undefined && d.artifactType !== '') wrongArtifactType = d.artifactType;
      continue;
    }
    if (d.mediaType !== MediaType.MANIFEST) {
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `provider image manifest has unsupported media type ${JSON.stringify(d.mediaType)}`,
        ctx,
      );
    }
    if (d.platform === undefined)
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        'provider image manifest lacks the required platform constraints',
        ctx,
      );
    if (
      (d.platform['os.version'] ?? '') !== '' ||
      d.platform.os !== target.os ||
      d.platform.architecture !== target.arch
    ) {
      wrongPlatform++;
      continue;
    }
    found++;
    selected = d;
  }
  if (found === 0 || selected === undefined) {
    if (wrongPlatform > 0) {
      throw sourceError(
        ErrorCode.PLATFORM_NOT_SUPPORTED,
        `provider ${provider.toString()} ${version.toString()} is not available for ${target.toString()}`,
        ctx,
      );
    }
    if (wrongArtifactType !== '')
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `provider image manifest has unsupported artifact type ${JSON.stringify(wrongArtifactType)}`,
        ctx,
      );
    throw sourceError(
      ErrorCode.INVALID_RESPONSE,
      'provider image manifest has unsupported artifact type; is this a container image, rather than an OpenTofu provider?',
      ctx,
    );
  }
  if (found > 1)
    throw sourceError(
      ErrorCode.INVALID_RESPONSE,
      `ambiguous manifest has multiple descriptors for platform ${target.toString()}`,
      ctx,
    );
  return selected;
}

/** `selectOCILayerBlob`. */
export function selectLayer(manifest: { layers: readonly Descriptor[] }, ctx: OciManifestContext): Descriptor {
  let found = 0;
  let other = 0;
  let selected: Descriptor | undefined;
  for (const d of manifest.layers) {
    if (d.mediaType !== PACKAGE_MEDIA_TYPE) {
      other++;
      continue;
    }
    found++;
    selected = d;
  }
  if (found === 0 || selected === undefined) {
    if (other > 0) {
      throw sourceError(
        ErrorCode.INVALID_RESPONSE,
        `image manifest contains no layers of type "${PACKAGE_MEDIA_TYPE}", but has other unsupported formats; this OCI artifact might be intended for a different version of OpenTofu`,
        ctx,
      );
    }
    throw sourceError(
      ErrorCode.INVALID_RESPONSE,
      `image manifest contains no layers of type "${PACKAGE_MEDIA_TYPE}"`,
      ctx,
    );
  }
  if (found > 1)
    throw sourceError(
      ErrorCode.INVALID_RESPONSE,
      'ambiguous manifest declares multiple eligible provider packages',
      ctx,
    );
  return selected;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
