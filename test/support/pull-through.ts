/**
 * What the pull-through mirror's tests and recordings share: the files a
 * `provkit serve -upstream` child needs (its certificate, the CAs it trusts,
 * a CLI configuration pointing registry.example.test at the origin), its
 * arguments, and a GET over HTTPS with the test CA.
 */
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';

import type { TestTls } from './servers/tls.js';

/** The provider host of every fake origin (the CLI configuration's `host` block points it at the origin). */
export const ORIGIN_HOST = 'registry.example.test';

/** An HTTPS answer, body whole. */
export interface HttpsAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

/** One request over HTTPS trusting `caPem`, on a connection of its own. */
export function httpsGet(url: string, caPem: string, method = 'GET'): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca: caPem, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The files of {@link writeMirrorFiles}. */
export interface MirrorFiles {
  readonly cert: string;
  readonly key: string;
  /** The origin's CA and this process's (the mirror's own certificate's): the mirror's SSL_CERT_FILE. */
  readonly cas: string;
  /** `host "registry.example.test"` → the origin's provider API. */
  readonly originRc: string;
}

/**
 * Writes into `dir` what a mirror child needs to reach `origin` (a fake
 * registry of the server host, which makes its own CA) and to serve HTTPS
 * with this process's test certificate.
 */
export function writeMirrorFiles(
  dir: string,
  tls: TestTls,
  origin: { readonly caPem: string; readonly providersUrl: string },
): MirrorFiles {
  const files: MirrorFiles = {
    cert: join(dir, 'cert.pem'),
    key: join(dir, 'key.pem'),
    cas: join(dir, 'cas.pem'),
    originRc: join(dir, 'origin.tfrc'),
  };
  writeFileSync(files.cert, tls.certPem);
  writeFileSync(files.key, tls.keyPem);
  writeFileSync(files.cas, `${origin.caPem}${tls.caPem}`);
  writeFileSync(
    files.originRc,
    `host "${ORIGIN_HOST}" {\n  services = {\n    "providers.v1" = "${origin.providersUrl}"\n  }\n}\n`,
  );
  return files;
}

/** The environment of a mirror child: its CAs, the origin's CLI configuration, its own cache and home. */
export function mirrorEnv(files: MirrorFiles, home: string, cacheDir: string): Record<string, string> {
  return { SSL_CERT_FILE: files.cas, TF_CLI_CONFIG_FILE: files.originRc, PROVKIT_CACHE_DIR: cacheDir, HOME: home };
}

/** `serve -upstream` arguments: HTTPS on a free loopback port, the origin on 127.0.0.1 allowed, then `extra`. */
export function upstreamArgs(files: MirrorFiles, store: string, extra: readonly string[] = []): string[] {
  return [
    '-upstream',
    '-allow-address=127.0.0.1',
    '-listen=127.0.0.1:0',
    `-tls-cert=${files.cert}`,
    `-tls-key=${files.key}`,
    ...extra,
    store,
  ];
}
