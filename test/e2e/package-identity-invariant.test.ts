// Issue 11 #1, as an invariant: locking providers together gives exactly the
// lock entries that locking each one alone gives, however many of them have
// archives with the same file name (namespaces, registries, a host alias)
// and however their downloads interleave (several platforms, random sizes,
// two runs at once sharing one TMPDIR). The requirement sets come from a
// seeded PRNG: a failure names its seed and case, and
// `PROVKIT_PROPERTY_SEED=<seed> npx vitest run <this file>` replays it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import type { FakeProvider } from '../support/servers/packages.js';
import {
  expectedLockHashes,
  hashesOf,
  lockHashes,
  ownedProvider,
  prng,
  type PackageHashes,
} from './package-identity.js';

const SEED = Number(process.env['PROVKIT_PROPERTY_SEED'] ?? 110101);
const CASES = 3;
const PLATFORMS = ['linux_amd64', 'darwin_arm64', 'windows_amd64', 'linux_arm64'];

let host: ServerHost;
let w: E2eWorkspace;

/** One provider address of the universe the cases draw from. */
interface Candidate {
  /** `HOST/NS/TYPE`, as provkit writes it. */
  readonly address: string;
  readonly version: string;
  /** platform → hashes of its package (computed here, one package at a time). */
  readonly hashes: Map<string, PackageHashes>;
}
const universe: Candidate[] = [];

/** Provider blocks of a lock file's text, by address (verbatim). */
function lockBlocks(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^provider "([^"]+)" \{\n[\s\S]*?^\}\n/gm)].map((m) => [m[1] ?? '', m[0]]));
}

/** The requirement name of an address in required_providers. */
const localName = (i: number): string => `p${i}`;

function projectFiles(cands: readonly Candidate[]): Record<string, string> {
  return {
    'main.tf': requiresTf(
      Object.fromEntries(cands.map((c) => [localName(universe.indexOf(c)), `${c.address}@${c.version}`])),
    ),
  };
}

/** Runs `provkit lock` for the platforms; returns the lock file's text, or throws with the diagnostic. */
async function lock(dir: string, platforms: readonly string[]): Promise<string> {
  const r = await runCli(['lock', ...platforms.map((p) => `-platform=${p}`)], { cwd: dir, env: w.env });
  if (r.code !== 0) throw new Error(`lock in ${dir} exited ${r.code}: ${r.stderr}`);
  return readFileSync(join(dir, '.terraform.lock.hcl'), 'utf8');
}

beforeAll(async () => {
  host = await startHost();
  const rand = prng(SEED);
  // One random size per archive name: packages with the same name are the
  // same size (as real builds of one release are nearly), so their downloads
  // end together when they start together.
  const sizes = new Map<string, number>();
  const sizeFor =
    (type: string) =>
    (platform: string): number => {
      const key = `${type} ${platform}`;
      if (!sizes.has(key)) sizes.set(key, 150_000 + Math.floor(rand() * 900_000));
      return sizes.get(key)!;
    };
  // Registry A: three namespaces of github 4.4.0 (one archive name) and an aws;
  // registry B: two of the same namespaces again, with other bytes.
  const onA = [
    await ownedProvider('A/hashicorp', 'hashicorp', 'github', '4.4.0', PLATFORMS, sizeFor('github'), rand),
    await ownedProvider('A/integrations', 'integrations', 'github', '4.4.0', PLATFORMS, sizeFor('github'), rand),
    await ownedProvider('A/acme', 'acme', 'github', '4.4.0', PLATFORMS, sizeFor('github'), rand),
    await ownedProvider('A/hashicorp', 'hashicorp', 'aws', '5.0.0', PLATFORMS, sizeFor('aws'), rand),
  ];
  const onB = [
    await ownedProvider('B/hashicorp', 'hashicorp', 'github', '4.4.0', PLATFORMS, sizeFor('github'), rand),
    await ownedProvider('B/integrations', 'integrations', 'github', '4.4.0', PLATFORMS, sizeFor('github'), rand),
  ];
  const regA: RemoteServer = await host.registry({ providers: onA.map((p) => p.fake) });
  const regB: RemoteServer = await host.registry({ providers: onB.map((p) => p.fake) });
  w = e2eWorkspace(regA.caPath);
  const add = async (hostname: string, p: { fake: FakeProvider; zips: ReadonlyMap<string, Buffer> }): Promise<void> => {
    const hashes = new Map<string, PackageHashes>();
    for (const [platform, zip] of p.zips) hashes.set(platform, await hashesOf(zip));
    universe.push({
      address: `${hostname}/${p.fake.namespace}/${p.fake.type}`,
      version: p.fake.versions[0]!.version,
      hashes,
    });
  };
  for (const p of onA) await add(regA.host, p);
  // The host alias: the same server (and bytes) under another name.
  for (const p of onA.slice(0, 2)) await add(`localhost:${regA.port}`, p);
  for (const p of onB) await add(regB.host, p);
}, 60_000);
afterAll(async () => {
  await host?.close();
  w?.remove();
});

describe('locking providers together gives what locking each alone gives', () => {
  it(`seed ${SEED}: ${CASES} random requirement sets, each locked 2 × 2 at once, equal the providers locked one by one`, async () => {
    const rand = prng(SEED ^ 0x5eed);
    const pick = <T>(items: readonly T[], n: number): T[] => {
      const pool = [...items];
      const out: T[] = [];
      while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
      return out;
    };
    // Cases lock 1, 3 and 1 platforms: with one, the packages of one name are
    // next to each other in the download queue and overlap even with 2
    // downloads at once (2 cores); with several they overlap with more.
    const counts = [1, 3, 1];
    const cases = Array.from({ length: CASES }, (_, n) => ({
      platforms: pick(PLATFORMS, counts[n % counts.length]!).sort(),
      set: pick(universe, 3 + Math.floor(rand() * 3)),
    }));

    // Each provider alone, for each platform set it is drawn with (two runs at
    // a time; each checked against the hashes computed here).
    const alone = new Map<string, string>();
    const key = (c: Candidate, platforms: readonly string[]): string => `${c.address} ${platforms.join(',')}`;
    const singles = [
      ...new Map(
        cases.flatMap(({ platforms, set }) => set.map((c) => [key(c, platforms), { c, platforms }] as const)),
      ).values(),
    ];
    for (let i = 0; i < singles.length; i += 2) {
      await Promise.all(
        singles.slice(i, i + 2).map(async ({ c, platforms }, j) => {
          const text = await lock(w.project(`alone-${i + j}`, projectFiles([c])), platforms);
          const block = lockBlocks(text).get(c.address);
          expect(block, `${key(c, platforms)} alone`).toBeDefined();
          expect(lockHashes(text).get(c.address)?.hashes, `${key(c, platforms)} alone`).toEqual(
            expectedLockHashes(c.hashes, platforms),
          );
          alone.set(key(c, platforms), block!);
        }),
      );
    }

    for (const [n, { platforms, set }] of cases.entries()) {
      const what = `seed ${SEED} case ${n} (${platforms.join(', ')}): ${set.map((c) => c.address).join(', ')}`;
      // Two rounds of two runs at once: each interleaving is another chance to mix packages up.
      const texts: string[] = [];
      for (const round of [0, 1]) {
        texts.push(
          ...(await Promise.all(
            [`${round}x`, `${round}y`].map((d) =>
              lock(w.project(`case-${n}-${d}`, projectFiles(set)), platforms).catch((err: unknown) => {
                throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`);
              }),
            ),
          )),
        );
      }
      for (const text of texts) {
        const blocks = lockBlocks(text);
        expect([...blocks.keys()].sort(), what).toEqual(set.map((c) => c.address).sort());
        for (const c of set) expect(blocks.get(c.address), `${what}: ${c.address}`).toBe(alone.get(key(c, platforms)));
      }
      expect(w.tmpLeftovers(), what).toEqual([]);
    }
  }, 400_000);
});
