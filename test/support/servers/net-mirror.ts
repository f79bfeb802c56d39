/**
 * A fake provider network mirror (the `provider-network-mirror-protocol`) over
 * real HTTP(S) on 127.0.0.1.
 *
 * Under `prefix` (default `/mirror/`), for each provider
 * `HOST/NS/TYPE` (HOST in comparison form, i.e. punycode):
 * - `HOST/NS/TYPE/index.json` → `{"versions":{"V":{}}}`;
 * - `HOST/NS/TYPE/V.json` → `{"archives":{"OS_ARCH":{"url":…,"hashes":[…]}}}`;
 * - the archives, next to the JSON (or on a second server with
 *   `archiveHost: 'separate'`).
 *
 * `hashes` chooses what each archive lists: `h1-zip` (what `terraform
 * providers mirror` writes: the zip-form h1), `zh`, `h1` (extracted form),
 * `both` (zh + h1), `none` (an empty list), or a function.
 * JSON is `application/json` unless `contentType` says otherwise.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { hashZipPackage } from '../../../src/hashing/index.js';
import { hostnameForComparison } from '../../../src/addresses/index.js';
import { startServer, type Fault, type RouteResponse, type TestServer } from './http-server.js';
import { packageFilename, type FakeProvider } from './packages.js';

export type MirrorHashes =
  'h1-zip' | 'zh' | 'h1' | 'both' | 'none' | ((h: { zh: string; h1: string; h1Zip: string }) => string[]);

export interface FakeNetMirrorOptions {
  providers: FakeProvider[];
  tls?: boolean;
  /** Path prefix of the mirror base URL; must start and end with `/` (default `/mirror/`). */
  prefix?: string;
  hashes?: MirrorHashes;
  /** How archive URLs are written in VERSION.json (default `relative`: the bare file name, as terraform writes). */
  urlStyle?: 'relative' | 'absolute' | 'root-relative';
  archiveHost?: 'same' | 'separate';
  /** Content-Type of the JSON documents (default `application/json`). */
  contentType?: string;
  faults?: Record<string, Fault | Fault[]>;
  /** Require `Authorization: Bearer <token>` on the JSON documents (archives never need it). */
  requireToken?: string;
  /** Extra `versions` keys in index.json (e.g. unparsable ones). */
  extraIndexVersions?: string[];
}

export interface FakeNetMirror extends TestServer {
  /** The mirror base URL, with its trailing slash. */
  readonly url: string;
  readonly archives: TestServer;
  readonly paths: {
    index(hostname: string, namespace: string, type: string): string;
    version(hostname: string, namespace: string, type: string, version: string): string;
    archive(hostname: string, namespace: string, type: string, version: string, platform: string): string;
  };
  /** The hashes of a package: zh, extracted h1, zip-form h1. */
  hashesOf(
    hostname: string,
    namespace: string,
    type: string,
    version: string,
    platform: string,
  ): { zh: string; h1: string; h1Zip: string };
}

export async function startFakeNetMirror(options: FakeNetMirrorOptions): Promise<FakeNetMirror> {
  const prefix = options.prefix ?? '/mirror/';
  const host = (h: string | undefined): string => hostnameForComparison(h ?? 'registry.example.test');
  const dir = (h: string, ns: string, t: string): string => `${prefix}${host(h)}/${ns}/${t}`;
  const paths: FakeNetMirror['paths'] = {
    index: (h, ns, t) => `${dir(h, ns, t)}/index.json`,
    version: (h, ns, t, v) => `${dir(h, ns, t)}/${v}.json`,
    archive: (h, ns, t, v, p) => `${dir(h, ns, t)}/${packageFilename(t, v, p)}`,
  };

  const json = new Map<string, string>();
  const files = new Map<string, Buffer>();
  const hashes = new Map<string, { zh: string; h1: string; h1Zip: string }>();
  const scratch = await mkdtemp(join(tmpdir(), 'provkit-fake-mirror-'));
  let archives: TestServer | undefined;
  const ref: { self?: TestServer } = {};
  const pending: Array<() => void> = [];

  for (const p of options.providers) {
    const h = p.hostname ?? 'registry.example.test';
    const versionsIndex: Record<string, object> = {};
    for (const v of p.versions) {
      versionsIndex[v.version] = {};
      const archivesDoc: Record<string, { url: string; hashes: string[] }> = {};
      for (const pkg of v.packages) {
        const path = paths.archive(h, p.namespace, p.type, v.version, pkg.platform);
        files.set(path, pkg.zip);
        const tmp = join(scratch, `${hashes.size}.zip`);
        await writeFile(tmp, pkg.zip);
        const z = await hashZipPackage(tmp);
        const hs = {
          zh: `zh:${createHash('sha256').update(pkg.zip).digest('hex')}`,
          h1: z.h1.ok ? z.h1.hash.text : '',
          h1Zip: z.h1Zip.ok ? z.h1Zip.hash.text : '',
        };
        hashes.set(path, hs);
        const mode = options.hashes ?? 'h1-zip';
        const list =
          typeof mode === 'function'
            ? mode(hs)
            : mode === 'h1-zip'
              ? [hs.h1Zip]
              : mode === 'zh'
                ? [hs.zh]
                : mode === 'h1'
                  ? [hs.h1]
                  : mode === 'both'
                    ? [hs.zh, hs.h1]
                    : [];
        const entry = { url: '', hashes: list };
        archivesDoc[pkg.platform] = entry;
        // URLs need the server origin: filled in once the servers listen.
        pending.push(() => {
          const encoded = path.split('/').map(encodeURIComponent).join('/');
          entry.url =
            options.urlStyle === 'absolute'
              ? `${(archives ?? ref.self)?.origin ?? ''}${encoded}`
              : options.urlStyle === 'root-relative'
                ? encoded
                : encodeURIComponent(packageFilename(p.type, v.version, pkg.platform));
        });
      }
      const versionPath = paths.version(h, p.namespace, p.type, v.version);
      pending.push(() => json.set(versionPath, JSON.stringify({ archives: archivesDoc }, null, 2)));
    }
    for (const extra of options.extraIndexVersions ?? []) versionsIndex[extra] = {};
    json.set(paths.index(h, p.namespace, p.type), JSON.stringify({ versions: versionsIndex }, null, 2));
  }
  await rm(scratch, { recursive: true, force: true });

  const unauthorized = (req: IncomingMessage): boolean =>
    options.requireToken !== undefined && req.headers.authorization !== `Bearer ${options.requireToken}`;
  const serveFile = (pathname: string): RouteResponse | undefined => {
    const f = files.get(pathname);
    return f ? { headers: { 'content-type': 'application/zip' }, body: f } : undefined;
  };

  const self = await startServer({
    ...(options.tls === undefined ? {} : { tls: options.tls }),
    ...(options.faults === undefined ? {} : { faults: options.faults }),
    handler: (req, url) => {
      const pathname = decodeURIComponent(url.pathname);
      const doc = json.get(pathname);
      if (doc !== undefined) {
        if (unauthorized(req)) return { status: 401, body: 'unauthorized\n' };
        return { headers: { 'content-type': options.contentType ?? 'application/json' }, body: doc };
      }
      return options.archiveHost === 'separate' ? undefined : serveFile(pathname);
    },
  });
  if (options.archiveHost === 'separate') {
    archives = await startServer({
      ...(options.tls === undefined ? {} : { tls: options.tls }),
      handler: (_req, url) => serveFile(decodeURIComponent(url.pathname)),
    });
  }
  ref.self = self;
  for (const f of pending) f();
  const main = self;
  return {
    ...main,
    url: `${main.origin}${prefix}`,
    archives: archives ?? main,
    paths,
    hashesOf: (h, ns, t, v, p) => hashes.get(paths.archive(h, ns, t, v, p)) ?? { zh: '', h1: '', h1Zip: '' },
    close: async () => {
      await Promise.all([main.close(), archives?.close()]);
    },
  };
}
