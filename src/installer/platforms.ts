/**
 * Which platforms a lock is made for (docs/platform-policy.md), in order of
 * precedence:
 *
 * 1. `-platform` flags;
 * 2. the platform policy, `provkit.hcl` (config/policy.ts);
 * 3. the platforms the existing lock file already covers, inferred from its
 *    `h1:` values ({@link PlatformInference}), so that running `lock` on a
 *    laptop does not drop CI's platforms nor add the laptop's;
 * 4. this machine's platform, as the reference.
 *
 * Inference never downloads a package to find out. An `h1:` of a locked
 * provider version is attributed to a platform by, in order:
 * - the hash store: the lock's `zh:` values (a registry lock holds one per
 *   published package) are looked up, and an entry recorded for platform P
 *   whose `h1:` the lock holds means P is covered (hashing/store.ts);
 * - the source's per-platform hashes: one package's metadata (OpenTofu's
 *   registry lists every platform's `h1:` in its `packages` extension);
 * - a filesystem mirror's packages, hashed locally (through the cache, so a
 *   platform that is then locked is not hashed twice).
 * `h1:` values none of these can attribute are left alone: the merge keeps
 * every hash the old lock had, so nothing is lost, and the platforms found
 * are reported as inferred.
 */
import {
  currentPlatform,
  parsePlatform,
  type Platform,
  type ProviderAddress,
  sortPlatforms,
  type Version,
} from '../addresses/index.js';
import type { PlatformPolicy } from '../config/index.js';
import type { Hash, HashStore, StoredHashes } from '../hashing/index.js';
import type { Locks } from '../lockfile/index.js';
import type { FetchCache } from './fetch-cache.js';

/** Where a run's platforms came from. */
export type PlatformOrigin = 'flags' | 'policy' | 'inferred' | 'host';

/** How an inferred platform was recognised. */
export type InferenceVia = 'hash store' | 'registry' | 'network mirror' | 'filesystem mirror';

/** The platforms of one run and why. */
export interface ChosenPlatforms {
  /** The platforms to lock, in order (as given, or sorted when inferred). */
  readonly platforms: readonly Platform[];
  /**
   * Where they came from: `-platform` flags (`flags`), a `provkit.hcl` policy (`policy`), the platforms the lock
   * file already covers (`inferred`), or this machine's (`host`).
   */
  readonly origin: PlatformOrigin;
  /** With `policy`: the policy file (as diagnostics name it). */
  readonly policyFile?: string;
  /** With `inferred`: how they were recognised, sorted. */
  readonly via?: readonly InferenceVia[];
}

/** What {@link PlatformInference.infer} found. */
export interface Inferred {
  /** Sorted; empty when nothing could be attributed. */
  readonly platforms: Platform[];
  /** How the platforms were recognised, each way once (sorted by {@link PlatformInference.infer}); empty with no platform. */
  readonly via: InferenceVia[];
}

/**
 * The platforms of a lock run, by the precedence of the module comment:
 * `flags` when any, else the `policy`, else what `inference` finds the old
 * `locks` cover (when given), else this machine's.
 */
export async function choosePlatforms(args: {
  readonly flags: readonly Platform[];
  readonly policy: PlatformPolicy | undefined;
  readonly locks: Locks;
  readonly inference?: PlatformInference;
}): Promise<ChosenPlatforms> {
  if (args.flags.length > 0) return { platforms: args.flags, origin: 'flags' };
  if (args.policy) return { platforms: args.policy.platforms, origin: 'policy', policyFile: args.policy.file };
  if (args.inference && args.locks.size > 0) {
    const found = await args.inference.infer(args.locks);
    if (found.platforms.length > 0) return { platforms: found.platforms, origin: 'inferred', via: found.via };
  }
  return { platforms: [currentPlatform()], origin: 'host' };
}

/**
 * Infers the platforms existing locks cover (see the module comment). One
 * instance serves every root of a run: store look-ups and source answers are
 * shared.
 */
export class PlatformInference {
  private readonly lookups = new Map<string, Promise<StoredHashes | undefined>>();

  /**
   * @param options - `cache`: the run's fetch cache, whose source is asked for per-platform hashes and whose filesystem
   *   mirror packages are hashed (once for the run); `hashStore`: looked up by the lock's `zh:` values; `signal`:
   *   aborts the source's requests.
   */
  constructor(
    private readonly options: {
      readonly cache: FetchCache;
      readonly hashStore?: HashStore;
      readonly signal?: AbortSignal;
    },
  ) {}

  /**
   * The platforms whose `h1:` the locks hold, by the three ways of the module comment, providers asked concurrently.
   * A source that cannot answer attributes nothing (its error is not thrown): what is not attributed is left out.
   */
  async infer(locks: Locks): Promise<Inferred> {
    const found = new Map<string, Platform>();
    const via = new Set<InferenceVia>();
    const results = await Promise.all(locks.all().map((l) => this.inferOne(l.provider, l.version, l.hashes)));
    for (const r of results) {
      for (const p of r.platforms) found.set(p.toString(), p);
      for (const v of r.via) via.add(v);
    }
    return { platforms: sortPlatforms(found.values()), via: [...via].sort() };
  }

  private lookup(zh: Hash): Promise<StoredHashes | undefined> {
    let p = this.lookups.get(zh.text);
    if (!p) {
      p = this.options.hashStore?.lookup(zh) ?? Promise.resolve(undefined);
      this.lookups.set(zh.text, p);
    }
    return p;
  }

  private async inferOne(provider: ProviderAddress, version: Version, hashes: readonly Hash[]): Promise<Inferred> {
    const h1s = new Set(hashes.filter((h) => h.scheme === 'h1:').map((h) => h.text));
    const attributed = new Map<string, Platform>();
    const via = new Set<InferenceVia>();
    const attribute = (h1: string, platform: Platform, how: InferenceVia): void => {
      if (!h1s.has(h1) || attributed.has(h1)) return;
      attributed.set(h1, platform);
      via.add(how);
    };
    const done = (): boolean => attributed.size === h1s.size;
    const result = (): Inferred => ({
      platforms: sortPlatforms(new Map([...attributed.values()].map((p) => [p.toString(), p])).values()),
      via: [...via],
    });
    if (h1s.size === 0) return result();

    // 1. The hash store, by the lock's zh: values.
    const zhs = hashes.filter((h) => h.scheme === 'zh:');
    const stored = await Promise.all(zhs.map((zh) => this.lookup(zh)));
    for (const s of stored) {
      if (s?.platform === undefined) continue;
      const platform = parsePlatformHint(s.platform);
      if (!platform) continue;
      for (const form of [s.hashes.h1, s.hashes.h1Zip]) if (form.ok) attribute(form.hash.text, platform, 'hash store');
    }
    if (done()) return result();

    // 2. The source's per-platform hashes, from one package's metadata.
    const source = this.options.cache.source;
    const signal = this.options.signal;
    const published =
      (await source.publishedPlatforms?.(provider, version, signal).catch(() => undefined)) ?? undefined;
    const local = (await source.localPlatforms?.(provider, version).catch(() => undefined)) ?? undefined;
    const candidates = local ?? published ?? [currentPlatform()];
    const here = currentPlatform();
    const probe =
      [...attributed.values()].find((p) => candidates.some((c) => c.equals(p))) ??
      candidates.find((c) => c.equals(here)) ??
      candidates[0];
    if (probe !== undefined && local === undefined) {
      const meta = await source.packageMeta(provider, version, probe, signal).catch(() => undefined);
      for (const h of meta?.reportedHashes ?? []) {
        if (h.hash.scheme !== 'h1:' || h.platform === undefined) continue;
        if (h.trust.kind === 'reported-by-registry') attribute(h.hash.text, h.platform, 'registry');
        else if (h.trust.kind === 'reported-by-mirror') attribute(h.hash.text, h.platform, 'network mirror');
      }
    }
    if (done()) return result();

    // 3. A filesystem mirror's packages, hashed here.
    if (local !== undefined) {
      const pkgs = await Promise.all(
        local.map(async (p) => ({
          p,
          pkg: await this.options.cache.lock(provider, version, p).catch(() => undefined),
        })),
      );
      for (const { p, pkg } of pkgs) if (pkg) attribute(pkg.h1.text, p, 'filesystem mirror');
    }
    return result();
  }
}

function parsePlatformHint(s: string): Platform | undefined {
  try {
    return parsePlatform(s);
  } catch {
    return undefined;
  }
}
