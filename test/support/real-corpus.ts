/**
 * The corpus of real lock files and configurations (`test/fixtures/real/`):
 * reading its items, the configurations and fake filesystem mirrors the
 * recording script (`scripts/record-real-corpus.ts`) gives terraform, and the
 * end-to-end test (`test/e2e/real-corpus.test.ts`) gives provkit. Both sides
 * must build exactly the same inputs, so both build them here.
 *
 * Fake packages: one small zip per (provider address, version, platform),
 * whose content names the full address, so that two providers of the same
 * type and version (`registry.opentofu.org/hashicorp/aws` and
 * `registry.terraform.io/hashicorp/aws`, `hashicorp/github` and
 * `integrations/github`) get different hashes. Their `h1:` hashes are not the
 * real ones: what is comparable is how each tool merges, keeps and rejects.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildZip } from './zip-writer.js';

export const REAL = fileURLToPath(new URL('../fixtures/real/', import.meta.url));
export const LOCKFILES = join(REAL, 'lockfiles');
export const CONFIGS = join(REAL, 'configs');
export const RECORDED = join(REAL, 'recorded');

/** The platforms every lock run asks for. */
export const LOCK_PLATFORMS = ['linux_amd64', 'darwin_arm64'] as const;
/** The platform `init` / `provkit install` runs for (the recording machine's). */
export const INSTALL_PLATFORM = 'linux_amd64';

/**
 * A provider no real lock file has, required next to the lock's providers:
 * `providers lock PROBE` then rewrites the file while fetching nothing the
 * lock holds, which shows how the tool reads and re-writes the real entries.
 * Its host sorts after every real one, so its block is the file's last.
 */
export const PROBE = { address: 'zzz.provkit.invalid/corpus/probe', version: '1.0.0' } as const;

export interface LockedProvider {
  /** As written in the file (not normalised). */
  address: string;
  version: string;
  constraints?: string;
}

export interface LockItem {
  /** `NNN-owner-repo`. */
  id: string;
  file: string;
  bytes: Buffer;
  providers: LockedProvider[];
}

/**
 * The providers of a lock file, read with a deliberately simple scanner (not
 * provkit's parser, which is under test): `provider "ADDR"` blocks and their
 * `version` / `constraints` string attributes.
 */
export function scanLockProviders(text: string): LockedProvider[] {
  const out: LockedProvider[] = [];
  const re = /^\s*provider\s+"([^"]+)"\s*\{?/gm;
  const starts = [...text.matchAll(re)];
  starts.forEach((m, i) => {
    const body = text.slice(m.index + m[0].length, starts[i + 1]?.index ?? text.length);
    const version = /^\s*version\s*=\s*"([^"]*)"/m.exec(body)?.[1];
    const constraints = /^\s*constraints\s*=\s*"([^"]*)"/m.exec(body)?.[1];
    if (version === undefined) return;
    out.push({ address: m[1]!, version, ...(constraints === undefined ? {} : { constraints }) });
  });
  return out;
}

export function lockItems(): LockItem[] {
  return readdirSync(LOCKFILES)
    .filter((f) => f.endsWith('.hcl'))
    .sort()
    .map((file) => {
      const bytes = readFileSync(join(LOCKFILES, file));
      return { id: file.replace(/\.hcl$/, ''), file, bytes, providers: scanLockProviders(bytes.toString('utf8')) };
    });
}

/** `host/ns/type` in lower case with the default host added, as both tools store it. */
export function normalizeAddress(address: string): string {
  const parts = address.toLowerCase().split('/');
  return parts.length === 2 ? `registry.terraform.io/${parts.join('/')}` : parts.join('/');
}

/** Local names: the type, with `-2`, `-3` … for a second provider of the same type (local names take letters, digits and dashes only). */
function localNames(addresses: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return addresses.map((a) => {
    const type = a.split('/').pop()!;
    const n = (seen.get(type) ?? 0) + 1;
    seen.set(type, n);
    return n === 1 ? type : `${type}-${n}`;
  });
}

/**
 * The root module for a lock file: every locked provider by its address,
 * constrained by the lock's own `constraints` string (none when the lock has
 * none), plus {@link PROBE}. A provider locked twice (it happens only in
 * broken files) is required once.
 */
export function lockConfig(item: LockItem): string {
  const unique = new Map<string, LockedProvider>();
  for (const p of item.providers)
    if (!unique.has(normalizeAddress(p.address))) unique.set(normalizeAddress(p.address), p);
  const providers = [...unique.values()];
  const names = localNames([...providers.map((p) => p.address), PROBE.address]);
  const lines = [...providers, { address: PROBE.address, constraints: PROBE.version }].map((p, i) => {
    const version = p.constraints === undefined ? '' : `      version = ${JSON.stringify(p.constraints)}\n`;
    return `    ${names[i]!} = {\n      source  = ${JSON.stringify(p.address)}\n${version}    }\n`;
  });
  return `terraform {\n  required_providers {\n${lines.join('')}  }\n}\n`;
}

export interface FakeRelease {
  /** Normalised address `host/ns/type`. */
  address: string;
  version: string;
}

/** The releases a lock item's mirror holds: each locked (address, version) and the probe. */
export function lockReleases(item: LockItem): FakeRelease[] {
  const list = item.providers.map((p) => ({ address: normalizeAddress(p.address), version: p.version }));
  list.push({ address: PROBE.address, version: PROBE.version });
  return dedupeReleases(list);
}

export function dedupeReleases(list: readonly FakeRelease[]): FakeRelease[] {
  const m = new Map(list.map((r) => [`${r.address}@${r.version}`, r]));
  return [...m.values()].sort((a, b) => (`${a.address}@${a.version}` < `${b.address}@${b.version}` ? -1 : 1));
}

/** The fake package of one (address, version, platform). Deterministic bytes. */
export function fakePackage(address: string, version: string, platform: string): Promise<Buffer> {
  const type = address.split('/').pop()!;
  return buildZip([
    {
      name: `terraform-provider-${type}_v${version}`,
      data: `#!/bin/sh\n# fake ${address} ${version} ${platform} (provkit real corpus)\nexit 1\n`,
      unixMode: 0o100755,
      encoder: 'portable',
    },
  ]);
}

/**
 * Writes a packed filesystem mirror (`HOST/NS/TYPE/terraform-provider-TYPE_V_OS_ARCH.zip`)
 * holding every release for every platform of {@link LOCK_PLATFORMS}.
 */
export async function writeFakeMirror(dir: string, releases: readonly FakeRelease[]): Promise<void> {
  for (const r of releases) {
    const type = r.address.split('/').pop()!;
    for (const platform of LOCK_PLATFORMS) {
      const path = join(dir, r.address, `terraform-provider-${type}_${r.version}_${platform}.zip`);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await fakePackage(r.address, r.version, platform));
    }
  }
}

/** A CLI configuration installing only from the filesystem mirror `dir`. */
export function fsMirrorCliConfig(dir: string): string {
  return `provider_installation {\n  filesystem_mirror {\n    path    = ${JSON.stringify(dir)}\n    include = ["*/*/*"]\n  }\n}\n`;
}

/** A configuration of the corpus: a directory of files, and the releases its mirror offers. */
export interface ConfigItem {
  id: string;
  dir: string;
  /** Every file under `dir/files` (relative path → bytes). */
  files: Map<string, Buffer>;
  releases: FakeRelease[];
}

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`],
  );
}

export function configItems(): ConfigItem[] {
  return readdirSync(CONFIGS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
    .map((id) => {
      const dir = join(CONFIGS, id);
      const files = new Map(
        walk(join(dir, 'files'))
          .sort()
          .map((rel) => [rel, readFileSync(join(dir, 'files', rel))]),
      );
      const mirror = JSON.parse(readFileSync(join(dir, 'mirror.json'), 'utf8')) as Record<string, string[]>;
      const releases = dedupeReleases(
        Object.entries(mirror).flatMap(([address, versions]) => versions.map((version) => ({ address, version }))),
      );
      return { id, dir, files, releases };
    });
}

/** What one command did: recorded from terraform, compared with provkit. */
export interface RecordedRun {
  /** The command's arguments after the program name, with `$MIRROR` for the mirror's path. */
  args: string[];
  code: number;
  /** The diagnostics terraform printed (stderr, -no-color), with paths replaced by `$MIRROR` / `$WORK`. */
  stderr: string;
  /** The lock file after the run; null when there was none. */
  lock: string | null;
}

export interface RecordedLockItem {
  id: string;
  /** Providers the simple scanner found (address, version, constraints). */
  providers: LockedProvider[];
  /** `providers lock -fs-mirror PROBE`: the file read and re-written; the probe's block added. */
  rewrite: RecordedRun;
  /** `providers lock -fs-mirror -platform=linux_amd64 -platform=darwin_arm64`: every provider, fake packages. */
  lock: RecordedRun;
  /** `init -backend=false` from the mirror: the fake package does not match the real hashes. */
  init: RecordedRun;
}

export interface RecordedConfigItem {
  id: string;
  /** `.terraform/modules/modules.json` as `terraform get` wrote it (null without module calls). */
  modulesJson: string | null;
  /** `providers lock -fs-mirror -platform=linux_amd64 -platform=darwin_arm64` with no lock file. */
  lock: RecordedRun;
  /** `init -backend=false` from the mirror with no lock file. */
  init: RecordedRun;
  /** `init -backend=false` again, with the lock file the first init wrote. */
  reinit: RecordedRun;
}

/** The block of {@link PROBE} (and the blank line before it) removed: the normalised form of the real entries. */
export function withoutProbe(lock: string): string {
  const i = lock.indexOf(`\nprovider "${PROBE.address}" {`);
  return i < 0 ? lock : lock.slice(0, i);
}
