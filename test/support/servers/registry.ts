/**
 * A fake provider registry (protocol v1) over real HTTP(S) on 127.0.0.1.
 *
 * Serves, for the providers it is given:
 * - `/.well-known/terraform.json` → `{"providers.v1": "/v1/providers/"}` (or `services`);
 * - `/v1/providers/NS/TYPE/versions`;
 * - `/v1/providers/NS/TYPE/VERSION/download/OS/ARCH` with `signing_keys`,
 *   and with OpenTofu's `packages` extension when asked;
 * - the archives, `terraform-provider-TYPE_VERSION_SHA256SUMS` (one
 *   `sha256  filename` line per archive, plus extra lines) and its binary
 *   detached signature, under `/files/NS/TYPE/VERSION/` (or on a second server
 *   with `archiveHost: 'separate'`, to test that credentials stay home).
 *
 * Fault switches: the base server's per-path faults, plus
 * {@link FakeRegistry.badSignature}, {@link FakeRegistry.unlistedKey} and
 * {@link FakeRegistry.tamperArchive}; and {@link FakeRegistry.resign}, a
 * release whose SHA256SUMS the registry re-signed with another key (a
 * valid signature the registry vouches for, by a key a pin may refuse). `requireToken` makes the API answer 401
 * without `Authorization: Bearer TOKEN` (files never need it).
 *
 * Usage:
 * ```ts
 * const reg = await startFakeRegistry({ providers: await fixtureProviders() });
 * // provider address: `${reg.host}/acme/demo`; trust reg.caPath
 * await reg.close();
 * ```
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hashZipPackage } from '../../../src/hashing/index.js';
import { startServer, type Fault, type LoggedRequest, type RouteResponse, type TestServer } from './http-server.js';
import { signDetached, testKey, type TestKey, type TestKeyName } from './keys.js';
import { packageFilename, type FakeProvider } from './packages.js';

export interface FakeRegistryOptions {
  providers: FakeProvider[];
  /** Default true. */
  tls?: boolean;
  faults?: Record<string, Fault | Fault[]>;
  /** The discovery document (default `{"providers.v1": "/v1/providers/"}`). */
  services?: Record<string, unknown>;
  /** Keys listed in `signing_keys` (default `['main']`; `[]` lists none). */
  listedKeys?: TestKeyName[];
  /** The key that signs SHA256SUMS (default `main`). */
  signWith?: TestKeyName;
  /** The key that signs one version's SHA256SUMS instead, by `NS/TYPE/VERSION` (a re-signed release). */
  signVersionWith?: Record<string, TestKeyName>;
  /** With `packagesExtension`: the `h1:` the registry reports for `NS/TYPE/VERSION/OS_ARCH` instead of the package's (a registry that reports a wrong hash). */
  reportedH1?: Record<string, string>;
  /** How download, SHA256SUMS and signature URLs are written (default `absolute`). */
  urlStyle?: 'absolute' | 'relative' | 'root-relative';
  /** `separate`: archives, SHA256SUMS and signatures live on a second server (another host:port). */
  archiveHost?: 'same' | 'separate';
  /** Serve OpenTofu's `packages` field (zh + h1 and size of every platform). */
  packagesExtension?: boolean;
  /** Lines appended to every SHA256SUMS (e.g. a manifest). */
  shasumsExtraLines?: string[];
  /** Rewrites each SHA256SUMS document before it is signed (blank lines, CRLF, upper case, …). */
  shasumsTransform?: (doc: string) => string;
  /** `warnings` of every versions response. */
  versionsWarnings?: string[];
  /** Require `Authorization: Bearer <token>` on discovery and API requests. */
  requireToken?: string;
  /** Rewrites each download response (to test bad fields). */
  downloadTransform?: (
    body: Record<string, unknown>,
    ctx: { namespace: string; type: string; version: string; platform: string },
  ) => Record<string, unknown>;
  /** How long the server lives before closing itself (default: the base server's). */
  lifetimeMs?: number;
}

export interface FakeRegistry extends TestServer {
  /** `ORIGIN/v1/providers/`: the `providers.v1` service URL (for host-service overrides). */
  readonly providersUrl: string;
  /** The archive server when `archiveHost: 'separate'` (else this server). */
  readonly archives: TestServer;
  /** Request paths (decoded) of each endpoint. */
  readonly paths: RegistryPaths;
  /** The SHA256SUMS document served for a version (after `shasumsTransform`). */
  shasums(namespace: string, type: string, version: string): string;
  /** zh: (hex) of a package. */
  sha256(namespace: string, type: string, version: string, platform: string): string;
  /** Arms a corrupted signature for a version. */
  badSignature(namespace: string, type: string, version: string, times?: number): void;
  /** Arms a valid signature by a key the registry does not list. */
  unlistedKey(namespace: string, type: string, version: string, times?: number): void;
  /** Arms a tampered archive (one byte flipped). */
  tamperArchive(namespace: string, type: string, version: string, platform: string, times?: number): void;
  /**
   * Re-signs a release from now on: the same SHA256SUMS bytes, signed by `key`, and the version's download
   * metadata lists that key alone in `signing_keys` (a registry that rotated the release's key). Returns its key ID.
   */
  resign(namespace: string, type: string, version: string, key: TestKeyName): Promise<string>;
  /** The key IDs of the listed keys. */
  readonly keyIds: string[];
}

export interface RegistryPaths {
  discovery: string;
  versions(namespace: string, type: string): string;
  download(namespace: string, type: string, version: string, platform: string): string;
  archive(namespace: string, type: string, version: string, platform: string): string;
  shasums(namespace: string, type: string, version: string): string;
  signature(namespace: string, type: string, version: string): string;
}

interface Entry {
  namespace: string;
  type: string;
  version: string;
  protocols: string[];
  platforms: Map<string, { filename: string; zip: Buffer; sha: string; h1?: string }>;
  shasums: string;
  signature: Buffer;
  /** The keys its download metadata lists, when not the registry's (a re-signed release). */
  listed?: TestKey[];
}

const enc = (s: string): string => encodeURIComponent(s);

export async function startFakeRegistry(options: FakeRegistryOptions): Promise<FakeRegistry> {
  const listed = await Promise.all((options.listedKeys ?? ['main']).map((k) => testKey(k)));
  const signer = await testKey(options.signWith ?? 'main');
  const other = await testKey('other');
  const entries = new Map<string, Entry>();
  const files = new Map<string, () => Buffer>();
  const key = (ns: string, t: string, v: string): string => `${ns}/${t}/${v}`;

  const paths: RegistryPaths = {
    discovery: '/.well-known/terraform.json',
    versions: (ns, t) => `/v1/providers/${ns}/${t}/versions`,
    download: (ns, t, v, p) => `/v1/providers/${ns}/${t}/${v}/download/${p.replace('_', '/')}`,
    archive: (ns, t, v, p) =>
      `/files/${ns}/${t}/${v}/${entries.get(key(ns, t, v))?.platforms.get(p)?.filename ?? packageFilename(t, v, p)}`,
    shasums: (ns, t, v) => `/files/${ns}/${t}/${v}/terraform-provider-${t}_${v}_SHA256SUMS`,
    signature: (ns, t, v) => `/files/${ns}/${t}/${v}/terraform-provider-${t}_${v}_SHA256SUMS.sig`,
  };

  const scratch = options.packagesExtension ? await mkdtemp(join(tmpdir(), 'provkit-fake-registry-')) : undefined;
  for (const p of options.providers) {
    for (const v of p.versions) {
      const platforms = new Map<string, { filename: string; zip: Buffer; sha: string; h1?: string }>();
      for (const pkg of v.packages) {
        const filename = pkg.filename ?? packageFilename(p.type, v.version, pkg.platform);
        const sha = createHash('sha256').update(pkg.zip).digest('hex');
        let h1: string | undefined;
        if (scratch !== undefined) {
          const tmp = join(scratch, `${p.namespace}-${p.type}-${filename}`);
          await writeFile(tmp, pkg.zip);
          const hashed = await hashZipPackage(tmp);
          if (hashed.h1.ok) h1 = hashed.h1.hash.text;
        }
        platforms.set(pkg.platform, { filename, zip: pkg.zip, sha, ...(h1 === undefined ? {} : { h1 }) });
      }
      let shasums =
        [...platforms.values()].map((x) => `${x.sha}  ${x.filename}\n`).join('') +
        (options.shasumsExtraLines ?? []).map((l) => `${l}\n`).join('');
      if (options.shasumsTransform) shasums = options.shasumsTransform(shasums);
      const e: Entry = {
        namespace: p.namespace,
        type: p.type,
        version: v.version,
        protocols: v.protocols ?? ['5.0'],
        platforms,
        shasums,
        signature: await signDetached(
          Buffer.from(shasums),
          options.signVersionWith?.[key(p.namespace, p.type, v.version)] === undefined
            ? signer
            : await testKey(options.signVersionWith[key(p.namespace, p.type, v.version)]!),
        ),
      };
      entries.set(key(p.namespace, p.type, v.version), e);
      for (const [platform, x] of platforms)
        files.set(paths.archive(p.namespace, p.type, v.version, platform), () => x.zip);
      files.set(paths.shasums(p.namespace, p.type, v.version), () => Buffer.from(e.shasums));
      files.set(paths.signature(p.namespace, p.type, v.version), () => e.signature);
    }
  }
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });

  const json = (body: unknown, status = 200): RouteResponse => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const unauthorized = (req: IncomingMessage): RouteResponse | undefined =>
    options.requireToken !== undefined && req.headers.authorization !== `Bearer ${options.requireToken}`
      ? json({ errors: ['unauthorized'] }, 401)
      : undefined;

  const serveFile = (pathname: string): RouteResponse | undefined => {
    const f = files.get(pathname);
    if (f) return { headers: { 'content-type': 'application/octet-stream' }, body: f() };
    // Relative URLs resolve under the download endpoint's directory.
    const m = /^\/v1\/providers\/[^/]+\/[^/]+\/[^/]+\/download\/[^/]+\/(files\/.*)$/.exec(pathname);
    if (m?.[1] !== undefined) {
      const g = files.get(`/${m[1]}`);
      if (g) return { headers: { 'content-type': 'application/octet-stream' }, body: g() };
    }
    return undefined;
  };

  let archives: TestServer | undefined;
  const ref: { self?: TestServer } = {};
  const urlFor = (path: string): string => {
    switch (options.urlStyle ?? 'absolute') {
      case 'absolute':
        return `${(archives ?? ref.self)?.origin ?? ''}${path.split('/').map(enc).join('/')}`;
      case 'root-relative':
        return path.split('/').map(enc).join('/');
      case 'relative':
        // Resolved against …/VERSION/download/OS/ → …/download/OS/files/… (served too).
        return path.slice(1).split('/').map(enc).join('/');
    }
  };

  const self = await startServer({
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    ...(options.lifetimeMs === undefined ? {} : { lifetimeMs: options.lifetimeMs }),
    handler: (req, url) => {
      const pathname = decodeURIComponent(url.pathname);
      if (pathname === paths.discovery) {
        return unauthorized(req) ?? json(options.services ?? { 'providers.v1': '/v1/providers/' });
      }
      const versions = /^\/v1\/providers\/([^/]+)\/([^/]+)\/versions$/.exec(pathname);
      if (versions) {
        const denied = unauthorized(req);
        if (denied) return denied;
        const [, ns = '', t = ''] = versions;
        const list = [...entries.values()].filter((e) => e.namespace === ns && e.type === t);
        if (list.length === 0) return json({ errors: ['Not Found'] }, 404);
        return json({
          id: `${ns}/${t}`,
          versions: list.map((e) => ({
            version: e.version,
            protocols: e.protocols,
            platforms: [...e.platforms.keys()].map((p) => ({ os: p.split('_')[0], arch: p.split('_')[1] })),
          })),
          ...(options.versionsWarnings ? { warnings: options.versionsWarnings } : {}),
        });
      }
      const download = /^\/v1\/providers\/([^/]+)\/([^/]+)\/([^/]+)\/download\/([^/]+)\/([^/]+)$/.exec(pathname);
      if (download) {
        const denied = unauthorized(req);
        if (denied) return denied;
        const [, ns = '', t = '', v = '', os = '', arch = ''] = download;
        const e = entries.get(key(ns, t, v));
        const platform = `${os}_${arch}`;
        const pkg = e?.platforms.get(platform);
        if (!e || !pkg) return json({ errors: ['Not Found'] }, 404);
        let body: Record<string, unknown> = {
          protocols: e.protocols,
          os,
          arch,
          filename: pkg.filename,
          download_url: urlFor(paths.archive(ns, t, v, platform)),
          shasums_url: urlFor(paths.shasums(ns, t, v)),
          shasums_signature_url: urlFor(paths.signature(ns, t, v)),
          shasum: pkg.sha,
          signing_keys: {
            gpg_public_keys: (e.listed ?? listed).map((k) => ({
              key_id: k.keyId,
              ascii_armor: k.publicArmored,
              trust_signature: '',
              source: 'provkit',
              source_url: null,
            })),
          },
        };
        if (options.packagesExtension) {
          body['packages'] = Object.fromEntries(
            [...e.platforms].map(([p, x]) => [
              p,
              {
                hashes: [`zh:${x.sha}`, ...[options.reportedH1?.[`${key(ns, t, v)}/${p}`] ?? x.h1 ?? []].flat()],
                package_size: x.zip.length,
              },
            ]),
          );
        }
        if (options.downloadTransform)
          body = options.downloadTransform(body, { namespace: ns, type: t, version: v, platform });
        return json(body);
      }
      return options.archiveHost === 'separate' ? undefined : serveFile(pathname);
    },
  });
  ref.self = self;
  if (options.archiveHost === 'separate') {
    archives = await startServer({
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      handler: (_req, url) => serveFile(decodeURIComponent(url.pathname)),
    });
  }
  const fileServer = archives ?? self;
  const closeBoth = async (): Promise<void> => {
    await Promise.all([self.close(), archives?.close()]);
  };

  const reg: FakeRegistry = {
    ...self,
    providersUrl: `${self.origin}/v1/providers/`,
    archives: fileServer,
    paths,
    keyIds: listed.map((k) => k.keyId),
    close: closeBoth,
    shasums: (ns: string, t: string, v: string) => entries.get(key(ns, t, v))?.shasums ?? '',
    sha256: (ns: string, t: string, v: string, p: string) => entries.get(key(ns, t, v))?.platforms.get(p)?.sha ?? '',
    badSignature(ns: string, t: string, v: string, times?: number) {
      fileServer.setFault(paths.signature(ns, t, v), {
        kind: 'replace',
        body: (orig: Buffer) => {
          const out = Buffer.from(orig);
          const i = out.length - 8;
          out[i] = (out[i] ?? 0) ^ 0x55;
          return out;
        },
        ...(times === undefined ? {} : { times }),
      });
    },
    unlistedKey(ns: string, t: string, v: string, times?: number) {
      fileServer.setFault(paths.signature(ns, t, v), {
        kind: 'replace',
        body: async () => signDetached(Buffer.from(entries.get(key(ns, t, v))?.shasums ?? ''), other),
        ...(times === undefined ? {} : { times }),
      });
    },
    tamperArchive(ns: string, t: string, v: string, p: string, times?: number) {
      fileServer.setFault(paths.archive(ns, t, v, p), { kind: 'tamper', ...(times === undefined ? {} : { times }) });
    },
    async resign(ns: string, t: string, v: string, name: TestKeyName) {
      const e = entries.get(key(ns, t, v));
      if (!e) throw new Error(`no release ${key(ns, t, v)}`);
      const k = await testKey(name);
      e.signature = await signDetached(Buffer.from(e.shasums), k);
      e.listed = [k];
      return k.keyId;
    },
  };
  return reg;
}

export type { LoggedRequest };
