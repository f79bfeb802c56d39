/**
 * What the installer reports while it works. The library never prints: it
 * calls an {@link EventSink} with these typed events, and `ui/human` and
 * `ui/json` render them. Events of concurrent work interleave; each carries
 * the provider (and version and platform) it is about.
 */
import type { Platform, ProviderAddress, Requirement, Version } from '../addresses/index.js';
import type { AuthLabel } from '../hashing/index.js';
import type { NetEvents } from '../net/index.js';
import { WarningCode } from '../errors.js';
import { type Disposition, groupDispositions, type Hash, type HashDispositions } from '../hashing/index.js';
import type { TrustedHash } from '../sources/index.js';
import type { VerifyProblemCode } from './verify-problem.js';

/** How a package was authenticated: defined beside the rule that chooses it (hashing/disposition.ts). */
export type { AuthLabel };

/**
 * One hash a fetched package came with, and who vouches for it
 * (docs/provenance.md): `fetch_complete` and `install_complete` carry them.
 * `platform`: the package it is a hash of, when known (a signed SHA256SUMS
 * line of another platform's file, a registry's `packages` hash, a mirror's
 * listed hash for another platform).
 */
export interface PackageHash extends HashDispositions {
  /** The platform whose package this is a hash of, when known. */
  readonly platform: Platform | undefined;
}

/**
 * The hashes of a fetch with their dispositions, one entry per distinct
 * hash (the one builder of {@link PackageHash}es): what the source reported
 * and what the authentication verified (`hashes`, the fetch's
 * `TrustedHash`es), plus the package's own `h1:` computed here (`own`, with
 * the fetch's local disposition), in first-seen order.
 */
export function packageHashes(
  hashes: readonly TrustedHash[],
  own?: { readonly hash: Hash; readonly disposition: Disposition; readonly platform: Platform },
): PackageHash[] {
  const all = own ? [...hashes, { hash: own.hash, trust: own.disposition, platform: own.platform }] : hashes;
  const platformOf = new Map<string, Platform>();
  for (const h of all) if (h.platform && !platformOf.has(h.hash.text)) platformOf.set(h.hash.text, h.platform);
  return groupDispositions(all.map((h) => ({ hash: h.hash, disposition: h.trust }))).map((g) => ({
    ...g,
    platform: platformOf.get(g.hash.text),
  }));
}

/** What a `fetch_progress` counts: downloaded bytes, or a local archive's bytes read for its `zh:` or hashed. */
export type ProgressPhase = 'download' | 'checksum' | 'hash';

/** How a platform's hashes changed the lock (`providers lock` docs/reference.md §6.1 item 90). */
export type LockChange = 'new-provider' | 'added' | 'unchanged';

/**
 * Everything a run reports while it works, discriminated by `type` (docs/json-ui.md says how `-json` renders each).
 */
export type InstallerEvent =
  | {
      readonly type: 'provider_selected';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly reason: 'lock' | 'constraints' | 'unconstrained';
      readonly constraints: string;
      /** Said in human output (`mirror`, as `providers mirror` says "Selected v1.1.0 to …"); `-json` always carries it. */
      readonly announce?: boolean;
    }
  /**
   * A package the run will fetch (or find in the hash store), known before
   * its turn comes: it waits for its metadata, a network slot or a core.
   * Said once per package, first, so that a progress display counts every
   * package of the run from the start (docs/terminal.md).
   */
  | {
      readonly type: 'fetch_queued';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
    }
  | {
      readonly type: 'fetch_start';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly location: string;
    }
  /**
   * Work on a package's bytes: `bytes` of `total` received (`download`, the
   * default), or of a local archive (a filesystem mirror's) read for its
   * `zh:` to look it up in the hash store (`checksum`) or read and hashed
   * (`hash`: inflated, its `h1:` forms computed). A phase starts again from 0.
   */
  | {
      readonly type: 'fetch_progress';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly bytes: number;
      readonly total: number | undefined;
      readonly phase?: ProgressPhase;
    }
  /**
   * A package download failed and will be tried again after `delayMs`
   * (`reason`: `HTTP 503`, `NET_TIMEOUT: …`); `attempt` is the attempt that failed.
   */
  | {
      readonly type: 'fetch_retry';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: string;
    }
  /** A package download continues from byte `offset` of `total` (the server answered a range request). */
  | {
      readonly type: 'fetch_resume';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly offset: number;
      readonly total: number;
    }
  /** A package could not be fetched or installed (the command reports why at the end). */
  | {
      readonly type: 'fetch_failed';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
    }
  | {
      readonly type: 'fetch_complete';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly auth: AuthLabel;
      /** The ID of the key whose signature covers the package (a registry's signed SHA256SUMS); undefined otherwise. */
      readonly keyId: string | undefined;
      /** True when the package was already there and verified, so nothing was downloaded. */
      readonly reused: boolean;
      /** True when its hashes came from the hash store by its signed `zh:`, so nothing was downloaded (`lock`). */
      readonly stored?: boolean;
      /** Every hash the fetch came with and who vouches for it ({@link packageHashes}); absent where not collected. */
      readonly hashes?: readonly PackageHash[];
    }
  | {
      readonly type: 'hashes_obtained';
      readonly provider: ProviderAddress;
      readonly platform: Platform;
      readonly change: LockChange;
    }
  /**
   * The platforms of a run (`lock`, `mirror`, `bundle create`, `verify`) and where they came from (installer/platforms.ts):
   * `-platform` flags, the policy file `policyFile`, inferred from the existing
   * lock file (`via`: how), or this machine's.
   */
  | {
      readonly type: 'platforms_chosen';
      readonly platforms: readonly Platform[];
      readonly origin: 'flags' | 'policy' | 'inferred' | 'host';
      /** With `policy`: the policy file as its diagnostics name it (relative to the caller's working directory). */
      readonly policyFile?: string;
      /** With `inferred`: how the platforms were recognised, sorted (`hash store`, `registry`, …). */
      readonly via?: readonly string[];
    }
  | {
      readonly type: 'warning';
      readonly code: WarningCode;
      readonly summary: string;
      readonly detail: string;
      readonly provider?: ProviderAddress;
    }
  | {
      readonly type: 'mirror_package';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      /** The package's file (or unpacked directory) relative to the mirror's target directory, forward slashes. */
      readonly path: string;
      readonly action: 'written' | 'kept';
    }
  /** A mirror's index document written (`index.json`, `VERSION.json`); `path` relative to the target directory, forward slashes. */
  | { readonly type: 'mirror_index'; readonly provider: ProviderAddress; readonly path: string }
  /**
   * Publishing to an OCI registry (installer/oci-publish.ts): a blob of a
   * package is `uploaded`, already `present` in the repository, or
   * `mounted` from another repository of the registry (`from`).
   */
  | {
      readonly type: 'oci_blob';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      /** `REGISTRY/REPOSITORY`. */
      readonly repository: string;
      readonly digest: string;
      readonly size: number;
      readonly what: 'package' | 'config';
      readonly action: 'uploaded' | 'present' | 'mounted';
      readonly from?: string;
    }
  /** Publishing: a version's tag now names its index (`pushed`), or already did (`unchanged`). */
  | {
      readonly type: 'oci_tag';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly repository: string;
      readonly tag: string;
      readonly digest: string;
      /** Every platform the index lists (earlier publishes included), sorted. */
      readonly platforms: readonly Platform[];
      readonly action: 'pushed' | 'unchanged';
    }
  /** `install`: about to choose a version (the locked one, or the newest meeting `constraints`). */
  | {
      readonly type: 'install_resolving';
      readonly provider: ProviderAddress;
      readonly constraints: string;
      readonly locked: Version | undefined;
    }
  /** `install`: fetching and installing a package (not emitted when an installed or cached package is reused). */
  | {
      readonly type: 'install_start';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly location: string;
    }
  /**
   * `install`: the package is in place at `dir`: `installed` (fetched now),
   * `previously-installed` (the target already matched the lock, docs/reference.md §5.2 item 78.1) or
   * `cache` (linked from the plugin cache without fetching, docs/reference.md §5.2 item 78.3).
   */
  | {
      readonly type: 'install_complete';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      readonly mode: 'installed' | 'previously-installed' | 'cache';
      /** How the fetched package was authenticated; undefined when nothing was fetched. */
      readonly auth: AuthLabel | undefined;
      /** As `fetch_complete`'s: the signing key's ID when the fetched package was signed; undefined otherwise. */
      readonly keyId: string | undefined;
      /**
       * The package's directory: the run's `targetDir` as the caller gave it (so relative when that is) joined
       * with `HOST/NAMESPACE/TYPE/VERSION/OS_ARCH`.
       */
      readonly dir: string;
      /** As `fetch_complete`'s: the fetched package's hashes and who vouches for each; absent when nothing was fetched. */
      readonly hashes?: readonly PackageHash[];
    }
  /**
   * `install`: another process holds a package directory's mutex (reported after a few seconds, docs/reference.md
   * §5.5 item 86). The type keeps its first name; "lock" elsewhere means the lock file only.
   */
  | {
      readonly type: 'package_lock_wait';
      readonly provider: ProviderAddress;
      /** The mutex file: the run's `targetDir` as the caller gave it joined with `HOST/NAMESPACE/TYPE/VERSION/OS_ARCH.lock`. */
      readonly path: string;
      /** Who holds it, as `process PID on HOST`; undefined when the mutex file does not say (not yet written, or unreadable). */
      readonly holder: string | undefined;
      /** How long this run has waited so far, in milliseconds. */
      readonly waitedMs: number;
    }
  /** `verify`: one problem found (`code` is stable; see src/installer/verify.ts). */
  | {
      readonly type: 'verify_problem';
      readonly provider: ProviderAddress;
      readonly version: Version | undefined;
      readonly platform: Platform | undefined;
      readonly code: VerifyProblemCode;
      readonly message: string;
    }
  /**
   * `verify`: one package checked (hashed here), and who vouches for each of
   * its hashes (installer/verify-provenance.ts, docs/provenance.md).
   */
  | {
      readonly type: 'verify_package';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly platform: Platform;
      /** Where its bytes are: a path, or an OCI blob's URL. */
      readonly location: string;
      readonly hashes: readonly PackageHash[];
    }
  /** `verify`: lock-file hashes of a checked provider version that nobody vouches for now. */
  | {
      readonly type: 'verify_unvouched';
      readonly provider: ProviderAddress;
      readonly version: Version;
      readonly hashes: readonly Hash[];
    };

/**
 * Receives a run's events, synchronously, in the order they happen (concurrent packages interleave). It must not
 * throw; it may abort the run's signal.
 */
export type EventSink = (event: InstallerEvent) => void;

/**
 * How `init` reports the warnings a source gave with a provider's versions
 * (`QueryPackagesWarning` in `internal/command/init.go` of both references):
 * one warning per provider, each message on a `- ` line. Undefined when
 * there are none.
 */
export function queryWarningsEvent(provider: ProviderAddress, warnings: readonly string[]): InstallerEvent | undefined {
  if (warnings.length === 0) return undefined;
  return {
    type: 'warning',
    code: WarningCode.REGISTRY_WARNINGS,
    summary: 'Additional provider information from registry',
    detail: `The remote registry returned warnings for ${provider.toString()}:\n${warnings.map((w) => `- ${w}`).join('\n')}`,
    provider,
  };
}

/** The package one event is about: a provider's version for one platform. */
export interface PackageAt {
  readonly provider: ProviderAddress;
  readonly version: Version;
  readonly platform: Platform;
}

/** The `provider_selected` event ({@link InstallerEvent}). */
export type ProviderSelectedEvent = Extract<InstallerEvent, { readonly type: 'provider_selected' }>;

/**
 * The one builder of `provider_selected`: the version chosen for `req` and
 * why (select-version.ts, mirror-plan.ts). `announce`: said in human output
 * too (`mirror`).
 */
export function providerSelectedEvent(
  req: Requirement,
  chosen: { readonly version: Version; readonly reason: ProviderSelectedEvent['reason'] },
  announce = false,
): ProviderSelectedEvent {
  return {
    type: 'provider_selected',
    provider: req.provider,
    version: chosen.version,
    reason: chosen.reason,
    constraints: req.constraints.toString(),
    ...(announce ? { announce } : {}),
  };
}

/** The `fetch_complete` event ({@link InstallerEvent}). */
export type FetchCompleteEvent = Extract<InstallerEvent, { readonly type: 'fetch_complete' }>;

/**
 * The one builder of `fetch_complete`. `from`: the fetch's authentication
 * (its label and signing key), or `'reused'` when the package was already
 * in place and its checksum verified, so nothing was downloaded. `extra`:
 * the optional fields, present only where the caller collects them.
 */
export function fetchCompleteEvent(
  pkg: PackageAt,
  from: { readonly label: AuthLabel; readonly keyId?: string | undefined } | 'reused',
  extra: { readonly stored?: boolean; readonly hashes?: readonly PackageHash[] } = {},
): FetchCompleteEvent {
  const { provider, version, platform } = pkg;
  return from === 'reused'
    ? {
        type: 'fetch_complete',
        provider,
        version,
        platform,
        auth: 'verified checksum',
        keyId: undefined,
        reused: true,
        ...extra,
      }
    : {
        type: 'fetch_complete',
        provider,
        version,
        platform,
        auth: from.label,
        keyId: from.keyId,
        reused: false,
        ...extra,
      };
}

/**
 * The network callbacks of one package's download, as installer events:
 * progress, retries and resumes (src/net `NetEvents`).
 */
export function packageNetEvents(
  events: EventSink,
  provider: ProviderAddress,
  version: Version,
  platform: Platform,
): NetEvents {
  return {
    onProgress: (e) =>
      events({ type: 'fetch_progress', provider, version, platform, bytes: e.received, total: e.total }),
    onRetry: (e) =>
      events({
        type: 'fetch_retry',
        provider,
        version,
        platform,
        attempt: e.attempt,
        delayMs: e.delayMs,
        reason: e.reason,
      }),
    onResume: (e) => events({ type: 'fetch_resume', provider, version, platform, offset: e.offset, total: e.total }),
  };
}

/** A sink that drops everything. */
export const ignoreEvents: EventSink = () => undefined;
