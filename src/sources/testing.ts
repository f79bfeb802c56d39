/**
 * Test doubles of {@link Source} for other modules' tests (as OpenTofu's
 * `MockSource` and `HangingSource`). No I/O.
 */
import type { Platform, ProviderAddress, Version } from '../addresses/index.js';
import { compareVersions } from '../addresses/index.js';
import { ErrorCode } from '../errors.js';
import {
  sourceError,
  type AvailableVersions,
  type PackageAuthentication,
  type PackageLocation,
  type PackageMeta,
  type Source,
  type TrustedHash,
} from './source.js';

/** One package a {@link MockSource} knows. Unset fields get plausible defaults. */
export interface MockPackage {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
  /** Default: `http` at `https://mock.invalid/<filename>`. */
  readonly location?: PackageLocation;
  /** Default: `terraform-provider-TYPE_VERSION_PLATFORM.zip`. */
  readonly filename?: string;
  readonly reportedHashes?: readonly TrustedHash[];
  readonly authentication?: PackageAuthentication;
  readonly protocols?: readonly string[];
  readonly warnings?: readonly string[];
}

/** A call made to a test double. */
export interface SourceCall {
  readonly method: 'availableVersions' | 'packageMeta';
  readonly provider: string;
  readonly version?: string;
  readonly platform?: string;
}

/** What a {@link MockSource} answers besides its packages. */
export interface MockSourceOptions {
  /** Warnings returned with the versions of a provider (keyed by `provider.toString()`). */
  readonly warnings?: Readonly<Record<string, readonly string[]>>;
  /** Errors to throw instead of answering, keyed by `provider.toString()`. */
  readonly errors?: Readonly<Record<string, Error>>;
  /** What an unknown provider is: `registry-unknown` (default, as OpenTofu's mock) or `not-found`. */
  readonly unknown?: 'registry-unknown' | 'not-found';
  /** {@link MockSource.forDisplay} (default `mock source`). */
  readonly display?: string;
}

/** An in-memory source with a call log. */
export class MockSource implements Source {
  readonly calls: SourceCall[] = [];

  constructor(
    private readonly packages: readonly MockPackage[],
    private readonly options: MockSourceOptions = {},
  ) {}

  forDisplay(): string {
    return this.options.display ?? 'mock source';
  }

  availableVersions(provider: ProviderAddress): Promise<AvailableVersions> {
    this.calls.push({ method: 'availableVersions', provider: provider.toString() });
    const fail = this.options.errors?.[provider.toString()];
    if (fail) return Promise.reject(fail);
    const found = new Map<string, Version>();
    for (const p of this.packages) if (p.provider.equals(provider)) found.set(p.version.toString(), p.version);
    if (found.size === 0) {
      return Promise.reject(
        this.options.unknown === 'not-found'
          ? sourceError(
              ErrorCode.PROVIDER_NOT_FOUND,
              `provider ${provider.toString()} was not found in any of the search locations`,
              { provider },
            )
          : sourceError(
              ErrorCode.REGISTRY_PROVIDER_UNKNOWN,
              `provider registry ${provider.displayHostname} does not have a provider named ${provider.toString()}`,
              {
                provider,
              },
            ),
      );
    }
    return Promise.resolve({
      versions: [...found.values()].sort(compareVersions),
      warnings: [...(this.options.warnings?.[provider.toString()] ?? [])],
    });
  }

  packageMeta(provider: ProviderAddress, version: Version, platform: Platform): Promise<PackageMeta> {
    this.calls.push({
      method: 'packageMeta',
      provider: provider.toString(),
      version: version.toString(),
      platform: platform.toString(),
    });
    const fail = this.options.errors?.[provider.toString()];
    if (fail) return Promise.reject(fail);
    const p = this.packages.find(
      (x) => x.provider.equals(provider) && x.version.equals(version) && x.platform.equals(platform),
    );
    if (p === undefined) {
      return Promise.reject(
        sourceError(
          ErrorCode.PLATFORM_NOT_SUPPORTED,
          `provider ${provider.toString()} ${version.toString()} is not available for ${platform.toString()}`,
          {
            provider,
            version,
            platform,
          },
        ),
      );
    }
    const filename =
      p.filename ?? `terraform-provider-${provider.type}_${version.toString()}_${platform.toString()}.zip`;
    return Promise.resolve({
      provider,
      version,
      platform,
      filename,
      ...(p.protocols === undefined ? {} : { protocols: p.protocols }),
      location: p.location ?? { kind: 'http', url: `https://mock.invalid/${filename}` },
      reportedHashes: p.reportedHashes ?? [],
      ...(p.authentication === undefined ? {} : { authentication: p.authentication }),
      warnings: p.warnings ?? [],
      source: this.forDisplay(),
    });
  }
}

/**
 * A source whose calls never answer until their signal aborts (then they
 * reject with `ABORTED`). For testing cancellation and timeouts of callers.
 */
export class HangingSource implements Source {
  readonly calls: SourceCall[] = [];

  forDisplay(): string {
    return 'hanging source';
  }

  availableVersions(provider: ProviderAddress, signal?: AbortSignal): Promise<AvailableVersions> {
    this.calls.push({ method: 'availableVersions', provider: provider.toString() });
    return hang(signal, provider);
  }

  packageMeta(
    provider: ProviderAddress,
    version: Version,
    platform: Platform,
    signal?: AbortSignal,
  ): Promise<PackageMeta> {
    this.calls.push({
      method: 'packageMeta',
      provider: provider.toString(),
      version: version.toString(),
      platform: platform.toString(),
    });
    return hang(signal, provider);
  }
}

function hang<T>(signal: AbortSignal | undefined, provider: ProviderAddress): Promise<T> {
  return new Promise<T>((_resolve, reject) => {
    const abort = (): void =>
      reject(
        sourceError(ErrorCode.ABORTED, `request for ${provider.toString()} was interrupted`, {
          provider,
          cause: signal?.reason,
        }),
      );
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });
}
