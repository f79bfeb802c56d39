// The mirror server at the library level over HTTPS on 127.0.0.1: protocol
// documents generated from a packed mirror, unpacked packages zipped on the
// fly, on-disk indexes served as they are, refresh, conditional and range
// requests, and everything that must be 404/405/refused.
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createHashPool, hashPackageDir, hashZipPackage, type HashPool } from '../../src/hashing/index.js';
import { extractPackage } from '../../src/installer/extract.js';
import {
  isLoopbackHost,
  loggedPath,
  mirrorPathSegments,
  parseListen,
  parseRange,
  startMirrorServer,
  type AccessLogEntry,
  type MirrorServer,
} from '../../src/serve/server.js';
import { testTls, type TestTls } from '../support/servers/tls.js';
import { MIRROR } from '../bundles/helpers.js';

const DEMO = 'registry.example.test/acme/demo';
const ZIP = `${DEMO}/terraform-provider-demo_1.1.0_linux_amd64.zip`;

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let tls: TestTls;
let pool: HashPool;
let work: string;
let server: MirrorServer;
const log: AccessLogEntry[] = [];

function get(url: string, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Res> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      { host: u.hostname, port: u.port, path, method, headers, ca: tls.caPem, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  tls = await testTls();
  pool = createHashPool({ concurrency: 0 });
  work = await mkdtemp(join(tmpdir(), 'provkit-serve-'));
  await cp(MIRROR, join(work, 'mirror'), {
    recursive: true,
    filter: (src) => !src.endsWith('.json') && !src.endsWith('.md') && !src.endsWith('.ts') && !src.includes('/config'),
  });
  // An unpacked package beside the packed ones, and a provider with its own index files.
  await extractPackage(join(MIRROR, ZIP), join(work, 'mirror/registry.example.test/acme/unpacked/2.0.0/linux_amd64'));
  await mkdir(join(work, 'mirror/registry.example.test/acme/fixed'), { recursive: true });
  await writeFile(join(work, 'mirror/registry.example.test/acme/fixed/index.json'), '{"versions":{"7.0.0":{}}}');
  server = await startMirrorServer({
    dir: join(work, 'mirror'),
    flavor: 'tofu',
    pool,
    host: '127.0.0.1',
    port: 0,
    tls: { cert: tls.certPem, key: tls.keyPem },
    refreshMs: 0,
    onRequest: (e) => log.push(e),
  });
});
afterAll(async () => {
  await server.close();
  await pool.close();
  await rm(work, { recursive: true, force: true });
});

describe('serve: the network mirror protocol', () => {
  it('generates index.json and VERSION.json (zh: and both h1: forms) with application/json', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/$/);
    const index = await get(server.url, `/${DEMO}/index.json`);
    expect(index.status).toBe(200);
    expect(index.headers['content-type']).toBe('application/json');
    expect(index.body.toString()).toBe('{\n  "versions": {\n    "1.0.0": {},\n    "1.1.0": {}\n  }\n}');
    const version = await get(server.url, `/${DEMO}/1.1.0.json`);
    const doc = JSON.parse(version.body.toString()) as { archives: Record<string, { hashes: string[]; url: string }> };
    expect(Object.keys(doc.archives)).toEqual([
      'darwin_amd64',
      'darwin_arm64',
      'linux_amd64',
      'linux_arm64',
      'windows_amd64',
    ]);
    const z = await hashZipPackage(join(MIRROR, ZIP));
    expect(doc.archives['linux_amd64']).toEqual({
      hashes: [...new Set([z.h1.ok ? z.h1.hash.text : '', z.h1Zip.ok ? z.h1Zip.hash.text : '', z.zh.text])].sort(),
      url: 'terraform-provider-demo_1.1.0_linux_amd64.zip',
    });
    expect(log.some((e) => e.path === `/${DEMO}/index.json` && e.status === 200 && e.method === 'GET')).toBe(true);
  });

  it('serves archives as application/zip with ETag, 304, HEAD, Range 206 and 416', async () => {
    const full = await get(server.url, `/${ZIP}`);
    expect(full.status).toBe(200);
    expect(full.headers['content-type']).toBe('application/zip');
    const etag = full.headers['etag'] as string;
    expect(etag).toMatch(/^".+"$/);
    expect((await get(server.url, `/${ZIP}`, { 'If-None-Match': etag })).status).toBe(304);
    const head = await get(server.url, `/${ZIP}`, {}, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(String(full.body.length));
    const part = await get(server.url, `/${ZIP}`, { Range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${full.body.length}`);
    expect(part.body.equals(full.body.subarray(10, 20))).toBe(true);
    const tail = await get(server.url, `/${ZIP}`, { Range: 'bytes=-5' });
    expect(tail.body.equals(full.body.subarray(-5))).toBe(true);
    const bad = await get(server.url, `/${ZIP}`, { Range: `bytes=${full.body.length}-` });
    expect(bad.status).toBe(416);
    expect(bad.headers['content-range']).toBe(`bytes */${full.body.length}`);
    // A stale If-Range: the whole body.
    expect((await get(server.url, `/${ZIP}`, { Range: 'bytes=0-1', 'If-Range': '"stale"' })).status).toBe(200);
    // JSON documents have ETags too.
    const index = await get(server.url, `/${DEMO}/index.json`);
    expect(
      (await get(server.url, `/${DEMO}/index.json`, { 'If-None-Match': index.headers['etag'] as string })).status,
    ).toBe(304);
  });

  it('zips unpacked packages on the fly; their extracted h1: is the directory h1:', async () => {
    const doc = JSON.parse(
      (await get(server.url, '/registry.example.test/acme/unpacked/2.0.0.json')).body.toString(),
    ) as { archives: Record<string, { hashes: string[]; url: string }> };
    const a = doc.archives['linux_amd64']!;
    const dirH1 = (await hashPackageDir(join(work, 'mirror/registry.example.test/acme/unpacked/2.0.0/linux_amd64')))
      .text;
    expect(a.hashes).toContain(dirH1);
    const zip = await get(server.url, `/registry.example.test/acme/unpacked/${a.url}`);
    expect(zip.status).toBe(200);
    await writeFile(join(work, 'got.zip'), zip.body);
    const z = await hashZipPackage(join(work, 'got.zip'));
    expect(z.h1.ok && z.h1.hash.text).toBe(dirH1);
    expect(a.hashes).toContain(z.zh.text);
  });

  it('serves index files found on disk as they are', async () => {
    const r = await get(server.url, '/registry.example.test/acme/fixed/index.json');
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('{"versions":{"7.0.0":{}}}');
    expect(r.headers['content-type']).toBe('application/json');
  });

  it('sees packages added to the directory', async () => {
    await cp(join(MIRROR, ZIP), join(work, 'mirror', DEMO, 'terraform-provider-demo_1.2.0_linux_amd64.zip'));
    const index = await get(server.url, `/${DEMO}/index.json`);
    expect(JSON.parse(index.body.toString())).toEqual({ versions: { '1.0.0': {}, '1.1.0': {}, '1.2.0': {} } });
    await rm(join(work, 'mirror', DEMO, 'terraform-provider-demo_1.2.0_linux_amd64.zip'));
  });

  it.each([
    '/',
    '/registry.example.test/acme/demo/',
    '/registry.example.test/acme/demo',
    '/registry.example.test/acme/nope/index.json',
    '/registry.example.test/acme/demo/9.9.9.json',
    '/registry.example.test/acme/demo/terraform-provider-demo_9.9.9_linux_amd64.zip',
    '/registry.example.test/acme/demo/../../../../etc/passwd',
    '/registry.example.test/acme/demo/..%2f..%2fREADME.md',
    '/registry.example.test/acme/%2e%2e/demo/index.json',
    '/registry.example.test/acme/demo/%2e%2e%5cindex.json',
    '/registry.example.test/acme/demo/index.json%00',
    '/%2e%2e/mirror-fixtures/registry.example.test/acme/demo/index.json',
    '/registry.example.test/acme/demo/x%zz.json',
  ])('404 for %s', async (path) => {
    const r = await get(server.url, path);
    expect(r.status).toBe(404);
  });

  it('405 for other methods', async () => {
    const r = await get(server.url, `/${DEMO}/index.json`, {}, 'PUT');
    expect(r.status).toBe(405);
    expect(r.headers['allow']).toBe('GET, HEAD');
  });
});

describe('serve: addresses', () => {
  it('refuses plain HTTP on a non-loopback address without binding', async () => {
    await expect(
      startMirrorServer({ dir: work, flavor: 'tofu', pool, host: '0.0.0.0', port: 0 }),
    ).rejects.toMatchObject({ code: 'SERVE_INSECURE_LISTEN' });
  });

  it('serves plain HTTP on loopback', async () => {
    const s = await startMirrorServer({ dir: join(work, 'mirror'), flavor: 'tofu', pool, host: '127.0.0.1', port: 0 });
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(s.tls).toBe(false);
    await s.close();
  });

  it('parses -listen and ranges, and knows loopback', () => {
    expect(parseListen('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    expect(parseListen('[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    expect(parseListen(':9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(() => parseListen('nope')).toThrow(/-listen/);
    expect(isLoopbackHost('127.0.0.2')).toBe(true);
    expect(isLoopbackHost('::1')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('10.0.0.1')).toBe(false);
    expect(parseRange('bytes=0-0', 10)).toEqual({ start: 0, end: 0 });
    expect(parseRange('bytes=5-100', 10)).toEqual({ start: 5, end: 9 });
    expect(parseRange('bytes=10-', 10)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-1,3-4', 10)).toBeUndefined();
    expect(mirrorPathSegments('/a/b%2Fc')).toBeUndefined();
    expect(mirrorPathSegments('/a/b/c/d.json?x=1')).toEqual(['a', 'b', 'c', 'd.json']);
    expect(loggedPath('/a/b/c/index.json?token=s3cret&x=1')).toBe('/a/b/c/index.json?[redacted]');
    expect(loggedPath('/a/b/c/index.json')).toBe('/a/b/c/index.json');
  });
});
