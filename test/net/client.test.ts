// HttpClient + node-fetch adapter against real HTTP(S) servers on 127.0.0.1:
// retries, Retry-After, timeouts, size checks, redirects, credential scoping,
// proxies, CAs, and verify-then-commit downloads that never leave partial files.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { isProvkitError } from '../../src/errors.js';
import { ZhStream } from '../../src/hashing/index.js';
import {
  createNodeFetch,
  HttpClient,
  NetErrorCode,
  systemClock,
  type Clock,
  type HttpClientOptions,
  type NodeFetch,
} from '../../src/net/index.js';
import { startServer, type TestServer } from '../support/servers/http-server.js';
import { startConnectProxy, type TestProxy } from '../support/servers/proxy.js';

const PAYLOAD = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7 + 3) & 0xff));
const SHA = createHash('sha256').update(PAYLOAD).digest('hex');
const BIG = Buffer.alloc(8 * 1024 * 1024, 7);

let server: TestServer;
let other: TestServer;
let plain: TestServer;
let nf: NodeFetch;
let tmp: string;

/** A clock whose sleeps return at once and are recorded; timers are real. */
function fastClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now(),
    sleep: async (ms, signal) => {
      sleeps.push(ms);
      if (signal?.aborted) throw signal.reason;
      await Promise.resolve();
    },
    setTimer: (fn, ms) => systemClock.setTimer(fn, ms),
  };
}

function client(opts: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({ fetch: nf.fetch, clock: fastClock(), connectTimeoutMs: 2000, idleTimeoutMs: 2000, ...opts });
}

const handler = (req: IncomingMessage, url: URL) => {
  switch (url.pathname) {
    case '/data':
    case '/data2':
      return { headers: { 'content-type': 'application/octet-stream' }, body: PAYLOAD };
    case '/big':
      return { headers: { 'content-type': 'application/octet-stream' }, body: BIG };
    case '/json':
      return { headers: { 'content-type': 'application/json' }, body: '{"ok":true}' };
    case '/echo-auth':
      return { body: req.headers.authorization ?? '' };
    default:
      return undefined;
  }
};

beforeAll(async () => {
  server = await startServer({ handler });
  other = await startServer({ handler });
  plain = await startServer({ handler, tls: false });
  nf = createNodeFetch({ env: { SSL_CERT_FILE: server.caPath } });
  tmp = await mkdtemp(join(tmpdir(), 'provkit-net-'));
});
afterAll(async () => {
  nf.close();
  await Promise.all([server.close(), other.close(), plain.close()]);
  await rm(tmp, { recursive: true, force: true });
});
afterEach(() => {
  for (const s of [server, other, plain]) {
    s.clearFaults();
    s.log.length = 0;
  }
});

async function caught(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('get', () => {
  it('reads a body over https with the CA from SSL_CERT_FILE', async () => {
    const res = await client().get(`${server.origin}/json`);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('{"ok":true}');
    expect(res.attempts).toBe(1);
    expect(server.log[0]?.headers['user-agent']).toBe('provkit');
  });

  it('refuses an untrusted certificate without retrying', async () => {
    const bare = createNodeFetch({ env: {} });
    try {
      const retries: number[] = [];
      const err = await caught(
        new HttpClient({
          fetch: bare.fetch,
          clock: fastClock(),
          events: { onRetry: (e) => retries.push(e.attempt) },
        }).get(`${server.origin}/json`),
      );
      expect(err).toMatchObject({ code: NetErrorCode.CONNECTION, url: `${server.origin}/json` });
      expect(retries).toEqual([]);
    } finally {
      bare.close();
    }
  });

  it('names a refused connection by its URL once, with the system reason in words, no errno text', async () => {
    // A port nothing listens on: a server's, closed.
    const gone = await startServer({ handler, tls: false });
    const url = `${gone.origin}/json`;
    await gone.close();
    const err = await caught(client({ retries: 1 }).get(url));
    expect(err).toMatchObject({ code: NetErrorCode.CONNECTION, url });
    // node-fetch's own wording ("request to URL failed, reason: …") is not repeated.
    expect(err.message).toMatch(/^GET \S+: connect 127\.0\.0\.1:\d+: connection refused \(after 2 attempts\)$/);
    expect(err.message.startsWith(`GET ${url}: `)).toBe(true);
    expect(err.message.split(url)).toHaveLength(2);
  });

  it('retries a 500 and succeeds', async () => {
    server.setFault('/json', { kind: 'status', status: 500, times: 1 });
    const clock = fastClock();
    const res = await client({ clock, backoff: { minMs: 5, maxMs: 50 } }).get(`${server.origin}/json`);
    expect(res.status).toBe(200);
    expect(res.attempts).toBe(2);
    expect(clock.sleeps).toEqual([5]);
  });

  it('returns the last retryable response when retries run out', async () => {
    server.setFault('/json', { kind: 'status', status: 503 });
    const clock = fastClock();
    const res = await client({ clock, retries: 3, backoff: { minMs: 10, maxMs: 25 } }).get(`${server.origin}/json`);
    expect(res.status).toBe(503);
    expect(res.attempts).toBe(4);
    expect(clock.sleeps).toEqual([10, 20, 25]);
    expect(server.requests('/json')).toHaveLength(4);
  });

  it('honours Retry-After on 429 (seconds), capped by maxRetryAfterMs', async () => {
    server.setFault('/json', { kind: 'status', status: 429, headers: { 'retry-after': '2' }, times: 1 });
    const clock = fastClock();
    expect((await client({ clock }).get(`${server.origin}/json`)).status).toBe(200);
    expect(clock.sleeps).toEqual([2000]);

    server.setFault('/json', { kind: 'status', status: 429, headers: { 'retry-after': '3600' }, times: 1 });
    const clock2 = fastClock();
    await client({ clock: clock2, maxRetryAfterMs: 1500 }).get(`${server.origin}/json`);
    expect(clock2.sleeps).toEqual([1500]);
  });

  it('does not retry 404 or 501', async () => {
    server.setFault('/json', { kind: 'status', status: 501 });
    expect((await client({ retries: 3 }).get(`${server.origin}/json`)).attempts).toBe(1);
    expect((await client({ retries: 3 }).get(`${server.origin}/nope`)).status).toBe(404);
    expect(server.log).toHaveLength(2);
  });

  it('retries a connection dropped mid-body, then reports the short body', async () => {
    server.setFault('/data', { kind: 'drop', times: 1 });
    const ok = await client().get(`${server.origin}/data`);
    expect(ok.body.equals(PAYLOAD)).toBe(true);
    expect(ok.attempts).toBe(2);

    server.setFault('/data', { kind: 'drop' });
    const err = await caught(client({ retries: 2 }).get(`${server.origin}/data`));
    expect(err).toMatchObject({
      code: NetErrorCode.SIZE_MISMATCH,
      expected: String(PAYLOAD.length),
      url: `${server.origin}/data`,
    });
    expect(err.message).toMatch(
      /^incorrect response size: expected 65536 bytes, but got 32768 bytes from .* \(after 3 attempts\)$/,
    );
  });

  it('detects a Content-Length longer than the body', async () => {
    server.setFault('/data', { kind: 'wrong-length', delta: 100 });
    const err = await caught(client({ retries: 0 }).get(`${server.origin}/data`));
    expect(err).toMatchObject({
      code: NetErrorCode.SIZE_MISMATCH,
      expected: String(PAYLOAD.length + 100),
      found: String(PAYLOAD.length),
    });
  });

  it('times out a stalled body (idle) and stalled headers (connect), retrying each', async () => {
    server.setFault('/data', { kind: 'stall', phase: 'body' });
    const idle = await caught(client({ idleTimeoutMs: 150, retries: 1 }).get(`${server.origin}/data`));
    expect(idle).toMatchObject({ code: NetErrorCode.TIMEOUT });
    expect(idle.message).toContain('no data from');
    expect(server.requests('/data')).toHaveLength(2);

    server.setFault('/json', { kind: 'stall', phase: 'headers', times: 1 });
    const res = await client({ connectTimeoutMs: 300 }).get(`${server.origin}/json`);
    expect(res.status).toBe(200);
    expect(res.attempts).toBe(2);
  });

  it('limits the body size', async () => {
    const err = await caught(client().get(`${server.origin}/data`, { maxBytes: 1000 }));
    expect(err).toMatchObject({ code: NetErrorCode.RESPONSE_TOO_LARGE, expected: '1000' });
  });

  it('aborts on the signal, also while waiting to retry', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await caught(client().get(`${server.origin}/json`, { signal: ac.signal }))).toMatchObject({
      code: 'ABORTED',
    });

    server.setFault('/json', { kind: 'stall', phase: 'headers' });
    const ac2 = new AbortController();
    setTimeout(() => ac2.abort(), 50);
    const err = await caught(client({ connectTimeoutMs: 5000 }).get(`${server.origin}/json`, { signal: ac2.signal }));
    expect(isProvkitError(err, 'ABORTED')).toBe(true);
  });

  it('follows redirects up to the limit', async () => {
    server.setFault('/a', { kind: 'redirect', location: '/b' });
    server.setFault('/b', { kind: 'redirect', location: `${other.origin}/json`, status: 307 });
    const redirects: string[] = [];
    const res = await client({ events: { onRedirect: (e) => redirects.push(e.to) } }).get(`${server.origin}/a`);
    expect(res.status).toBe(200);
    expect(res.url).toBe(`${other.origin}/json`);
    expect(redirects).toEqual([`${server.origin}/b`, `${other.origin}/json`]);

    const err = await caught(client({ maxRedirects: 1 }).get(`${server.origin}/a`));
    expect(err).toMatchObject({ code: NetErrorCode.TOO_MANY_REDIRECTS });
  });

  it('sends a credential only to its host, and never across a redirect to another host', async () => {
    const credential = { host: server.host, token: 'sekret' };
    const same = await client().get(`${server.origin}/echo-auth`, { credential });
    expect(same.body.toString()).toBe('Bearer sekret');

    const elsewhere = await client().get(`${other.origin}/echo-auth`, { credential });
    expect(elsewhere.body.toString()).toBe('');

    server.setFault('/hop', { kind: 'redirect', location: `${other.origin}/echo-auth` });
    const dropped: boolean[] = [];
    const redirected = await client().get(`${server.origin}/hop`, {
      credential,
      events: { onRedirect: (e) => dropped.push(e.credentialsDropped) },
    });
    expect(redirected.body.toString()).toBe('');
    expect(dropped).toEqual([true]);
    expect(other.log.map((r) => r.headers['authorization'])).toEqual([undefined, undefined]);

    // Same host: kept across the redirect.
    server.setFault('/hop2', { kind: 'redirect', location: '/echo-auth' });
    expect((await client().get(`${server.origin}/hop2`, { credential })).body.toString()).toBe('Bearer sekret');
  });

  describe("userinfo in a URL, as Go's client", () => {
    const withUser = (origin: string, path: string): string =>
      origin.replace('https://', 'https://user:p%40ss@') + path;
    const basic = `Basic ${Buffer.from('user:p@ss').toString('base64')}`;

    it('is sent as Authorization: Basic (decoded), not in the URL; the response URL keeps it for relative references', async () => {
      const res = await client().get(withUser(server.origin, '/echo-auth'));
      expect(res.body.toString()).toBe(basic);
      expect(server.log.at(-1)?.path).toBe('/echo-auth');
      expect(res.url).toBe(withUser(server.origin, '/echo-auth'));
    });

    it('follows a relative redirect, not an absolute one without it; a bearer credential for the host wins', async () => {
      server.setFault('/rel', { kind: 'redirect', location: '/echo-auth' });
      expect((await client().get(withUser(server.origin, '/rel'))).body.toString()).toBe(basic);
      server.setFault('/abs', { kind: 'redirect', location: `${other.origin}/echo-auth` });
      expect((await client().get(withUser(server.origin, '/abs'))).body.toString()).toBe('');
      const bearer = await client().get(withUser(server.origin, '/echo-auth'), {
        credential: { host: server.host, token: 't' },
      });
      expect(bearer.body.toString()).toBe('Bearer t');
    });

    it('never shows the password: errors, events and the download result say user:xxxxx@', async () => {
      const dir = await mkdtemp(join(tmp, 'userinfo-'));
      server.setFault('/data', { kind: 'status', status: 401 });
      const seen: string[] = [];
      const err = await caught(
        client({ events: { onRequest: (e) => seen.push(e.url) } }).download(
          withUser(server.origin, '/data'),
          join(dir, 'pkg.zip'),
        ),
      );
      expect(err).toMatchObject({
        code: NetErrorCode.HTTP_STATUS,
        url: `${server.origin.replace('https://', 'https://user:xxxxx@')}/data`,
      });
      expect(err.message).toBe(
        `unsuccessful request to ${server.origin.replace('https://', 'https://user:xxxxx@')}/data: 401 Unauthorized`,
      );
      expect(seen).toEqual([`${server.origin.replace('https://', 'https://user:xxxxx@')}/data`]);
      server.clearFaults();
      const res = await client().download(withUser(server.origin, '/data'), join(dir, 'pkg.zip'));
      expect(res.url).toBe(`${server.origin.replace('https://', 'https://user:xxxxx@')}/data`);
      expect(server.log.at(-1)?.headers['authorization']).toBe(basic);
    });
  });
});

describe('proxies and CAs', () => {
  let proxy: TestProxy;
  beforeAll(async () => {
    proxy = await startConnectProxy();
  });
  afterAll(() => proxy.close());

  const lookup: LookupFunction = (_host, options, cb) => {
    if (typeof options === 'object' && options.all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: '127.0.0.1', family: 4 },
      ]);
    else cb(null, '127.0.0.1', 4);
  };

  it('tunnels https through HTTPS_PROXY, verifying the server with NODE_EXTRA_CA_CERTS', async () => {
    const via = createNodeFetch({ env: { HTTPS_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: server.caPath } });
    try {
      const res = await new HttpClient({ fetch: via.fetch }).get(`https://registry.example.test:${server.port}/json`);
      expect(res.body.toString()).toBe('{"ok":true}');
      expect(proxy.log).toContain(`CONNECT registry.example.test:${server.port}`);
    } finally {
      via.close();
    }
  });

  it('bypasses the proxy for NO_PROXY hosts and for loopback addresses', async () => {
    proxy.log.length = 0;
    const via = createNodeFetch({
      env: { https_proxy: proxy.url, NO_PROXY: 'example.test' },
      extraCaPems: [server.caPem],
      lookup,
    });
    try {
      await new HttpClient({ fetch: via.fetch }).get(`https://registry.example.test:${server.port}/json`);
      await new HttpClient({ fetch: via.fetch }).get(`${server.origin}/json`);
      expect(proxy.log).toEqual([]);
    } finally {
      via.close();
    }
  });

  it('refuses a socks proxy and reports an unreadable CA file', () => {
    expect(() => createNodeFetch({ env: { HTTPS_PROXY: 'socks5://127.0.0.1:1080' } })).toThrow(
      /unsupported proxy scheme "socks5"/,
    );
    expect(() => createNodeFetch({ env: { SSL_CERT_FILE: join(tmp, 'missing.pem') } })).toThrow(/SSL_CERT_FILE/);
  });

  it('reads the CA file with the first https request, not before (an http-only run never does)', async () => {
    const ca = join(tmp, 'late.pem');
    await writeFile(ca, await readFile(server.caPath));
    const late = createNodeFetch({ env: { SSL_CERT_FILE: ca } });
    try {
      await rm(ca);
      // Created while the file was there; gone before any https request.
      const http = new HttpClient({ fetch: late.fetch, clock: fastClock() });
      expect((await http.get(`${plain.origin}/json`)).status).toBe(200);
      const err = await caught(http.get(`${server.origin}/json`));
      expect(err.message).toMatch(/cannot read the CA certificates named by SSL_CERT_FILE: .*late\.pem/);
    } finally {
      late.close();
    }
  });
});

describe('a redirect learnt ahead of its download (learnRedirect)', () => {
  const log = (s: TestServer): string[] => s.log.map((q) => `${q.method} ${q.pathname} ${q.status ?? ''}`.trim());

  it('starts the download at the target: the origin is asked once, by the probe; the same redirect event; no credential to the other host', async () => {
    server.setFault(/^\/pkg-[0a]\.zip$/, { kind: 'redirect', location: `${other.origin}/data` });
    const http = client();
    const dir = await mkdtemp(join(tmp, 'learnt-'));
    // Not before a download from the origin was redirected: nothing asked.
    expect(await http.learnRedirect(`${server.origin}/pkg-a.zip`)).toBeUndefined();
    expect(log(server)).toEqual([]);
    await http.download(`${server.origin}/pkg-0.zip`, join(dir, 'first.zip'));
    server.log.length = 0;
    other.log.length = 0;
    const credential = { host: new URL(server.origin).host, token: 'secret' };
    expect(await http.learnRedirect(`${server.origin}/pkg-a.zip`, { credential })).toBe(other.origin);
    expect(log(server)).toEqual(['GET /pkg-a.zip 302']);
    expect(server.log[0]!.headers['authorization']).toBe('Bearer secret');
    const redirects: Array<{ to: string; status: number; credentialsDropped: boolean }> = [];
    const res = await http.download(`${server.origin}/pkg-a.zip`, join(dir, 'pkg.zip'), {
      credential,
      events: {
        onRedirect: (e) => redirects.push({ to: e.to, status: e.status, credentialsDropped: e.credentialsDropped }),
      },
    });
    expect(res).toMatchObject({ url: `${other.origin}/data`, size: PAYLOAD.length });
    expect(log(server)).toEqual(['GET /pkg-a.zip 302']);
    expect(log(other)).toEqual(['GET /data 200']);
    expect(other.log[0]!.headers['authorization']).toBeUndefined();
    expect(redirects).toEqual([{ to: `${other.origin}/data`, status: 302, credentialsDropped: true }]);
    // Used once: a second download of the URL asks the origin again.
    await http.download(`${server.origin}/pkg-a.zip`, join(dir, 'again.zip'));
    expect(log(server)).toEqual(['GET /pkg-a.zip 302', 'GET /pkg-a.zip 302']);
  });

  it('an origin that answers a probe without a redirect is not probed again; its downloads go to it as before', async () => {
    server.setFault('/pkg-c.zip', { kind: 'redirect', location: '/data' });
    const http = client();
    await http.download(`${server.origin}/pkg-c.zip`, join(await mkdtemp(join(tmp, 'first-')), 'first.zip'));
    server.log.length = 0;
    expect(await http.learnRedirect(`${server.origin}/data`)).toBeUndefined();
    expect(await http.learnRedirect(`${server.origin}/data2`)).toBeUndefined();
    expect(log(server)).toEqual(['GET /data 200']);
    const dir = await mkdtemp(join(tmp, 'direct-'));
    await http.download(`${server.origin}/data2`, join(dir, 'pkg.zip'));
    expect(log(server)).toEqual(['GET /data 200', 'GET /data2 200']);
  });

  it('a learnt target that fails (an expired signed URL) sends the download to the origin, which redirects afresh', async () => {
    server.setFault('/pkg-d.zip', { kind: 'redirect', location: `${other.origin}/data` });
    server.setFault('/pkg-b.zip', { kind: 'redirect', location: `${other.origin}/expired`, times: 1 });
    server.setFault('/pkg-b.zip', { kind: 'redirect', location: `${other.origin}/data` });
    const http = client();
    await http.download(`${server.origin}/pkg-d.zip`, join(await mkdtemp(join(tmp, 'first-')), 'first.zip'));
    server.log.length = 0;
    other.log.length = 0;
    expect(await http.learnRedirect(`${server.origin}/pkg-b.zip`)).toBe(other.origin);
    const dir = await mkdtemp(join(tmp, 'expired-'));
    const res = await http.download(`${server.origin}/pkg-b.zip`, join(dir, 'pkg.zip'));
    expect(res).toMatchObject({ url: `${other.origin}/data`, size: PAYLOAD.length, attempts: 1 });
    expect(log(other)).toEqual(['GET /expired 404', 'GET /data 200']);
    expect(log(server)).toEqual(['GET /pkg-b.zip 302', 'GET /pkg-b.zip 302']);
    expect(await listing(dir)).toEqual(['pkg.zip']);
  });
});

async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir)).sort();
}

describe('download', () => {
  it('streams through the transforms to a temp file and renames it into place', async () => {
    const dir = await mkdtemp(join(tmp, 'ok-'));
    let zh: ZhStream | undefined;
    const progress: number[] = [];
    const res = await client({ progressIntervalMs: 0 }).download(`${server.origin}/data`, join(dir, 'sub', 'pkg.zip'), {
      transforms: () => [(zh = new ZhStream())],
      events: { onProgress: (e) => progress.push(e.received) },
    });
    expect(res).toMatchObject({ path: join(dir, 'sub', 'pkg.zip'), size: PAYLOAD.length, attempts: 1 });
    expect(zh?.result().zh.text).toBe(`zh:${SHA}`);
    expect((await readFile(res.path)).equals(PAYLOAD)).toBe(true);
    expect(await listing(join(dir, 'sub'))).toEqual(['pkg.zip']);
    expect(progress.at(-1)).toBe(PAYLOAD.length);
  });

  it('retries a dropped connection with a fresh temp file and hasher', async () => {
    const dir = await mkdtemp(join(tmp, 'drop-'));
    server.setFault('/data', { kind: 'drop', times: 2 });
    const hashers: ZhStream[] = [];
    const res = await client().download(`${server.origin}/data`, join(dir, 'pkg.zip'), {
      transforms: () => [hashers[hashers.push(new ZhStream()) - 1]!],
    });
    expect(res.attempts).toBe(3);
    expect(hashers.at(-1)?.result().zh.text).toBe(`zh:${SHA}`);
    expect(await listing(dir)).toEqual(['pkg.zip']);
  });

  const failures: Array<[string, (s: TestServer) => void, RegExp | string]> = [
    ['a connection dropped on every attempt', (s) => s.setFault('/data', { kind: 'drop' }), NetErrorCode.SIZE_MISMATCH],
    ['a stalled body', (s) => s.setFault('/data', { kind: 'stall', phase: 'body' }), NetErrorCode.TIMEOUT],
    ['a 404', (s) => s.setFault('/data', { kind: 'status', status: 404 }), NetErrorCode.HTTP_STATUS],
    ['a 500 on every attempt', (s) => s.setFault('/data', { kind: 'status', status: 500 }), NetErrorCode.HTTP_STATUS],
    [
      'a wrong Content-Length',
      (s) => s.setFault('/data', { kind: 'wrong-length', delta: 7 }),
      NetErrorCode.SIZE_MISMATCH,
    ],
  ];
  it.each(failures)('leaves nothing behind after %s', async (_name, arm, code) => {
    const dir = await mkdtemp(join(tmp, 'fail-'));
    await writeFile(join(dir, 'unrelated'), 'x');
    arm(server);
    const err = await caught(
      client({ idleTimeoutMs: 100, retries: 1, downloadRetries: 1 }).download(
        `${server.origin}/data`,
        join(dir, 'pkg.zip'),
      ),
    );
    expect(err).toMatchObject({ code, url: `${server.origin}/data` });
    expect(await listing(dir)).toEqual(['unrelated']);
  });

  describe('a transform that stops taking bytes cannot hold a download', () => {
    /** Takes the first chunk, then never calls back: the pipeline behind the body stalls. */
    const stuck = (): Transform => new Transform({ transform: (_chunk, _enc, _cb) => undefined });

    it('the idle timeout ends it while the body waits (NET_TIMEOUT, retried), and nothing is left', async () => {
      const dir = await mkdtemp(join(tmp, 'stuck-idle-'));
      let attempts = 0;
      // More than the pipeline's buffers hold: the body is left waiting to hand on a chunk.
      const err = await caught(
        client({ idleTimeoutMs: 200, downloadRetries: 1 }).download(`${server.origin}/big`, join(dir, 'pkg.zip'), {
          transforms: () => (attempts++, [stuck()]),
        }),
      );
      expect(err).toMatchObject({ code: NetErrorCode.TIMEOUT, url: `${server.origin}/big` });
      expect(attempts).toBe(2);
      expect(await listing(dir)).toEqual([]);
    });

    it("the caller's abort ends it (ABORTED), and nothing is left", async () => {
      const dir = await mkdtemp(join(tmp, 'stuck-abort-'));
      const controller = new AbortController();
      const transforms = (): Transform[] => [
        new Transform({
          transform: (_chunk, _enc, _cb) => {
            controller.abort(new Error('interrupted by SIGTERM'));
          },
        }),
      ];
      const err = await caught(
        client({ idleTimeoutMs: 0 }).download(`${server.origin}/data`, join(dir, 'pkg.zip'), {
          transforms,
          signal: controller.signal,
        }),
      );
      expect(err).toMatchObject({ code: 'ABORTED', url: `${server.origin}/data` });
      expect(await listing(dir)).toEqual([]);
    });
  });

  it('reports a final 500 with the reference text', async () => {
    const dir = await mkdtemp(join(tmp, 'status-'));
    server.setFault('/data', { kind: 'status', status: 500 });
    const err = await caught(client({ downloadRetries: 2 }).download(`${server.origin}/data`, join(dir, 'pkg.zip')));
    expect(err.message).toBe(
      `unsuccessful request to ${server.origin}/data: 500 Internal Server Error (after 3 attempts)`,
    );
  });

  it('lets verify reject a truncated close-delimited body that no size check can see', async () => {
    const dir = await mkdtemp(join(tmp, 'trunc-'));
    server.setFault('/data', { kind: 'truncate' });
    let zh: ZhStream | undefined;
    const err = await caught(
      client().download(`${server.origin}/data`, join(dir, 'pkg.zip'), {
        transforms: () => [(zh = new ZhStream())],
        verify: () => {
          const got = zh?.result().zh.text;
          return got === `zh:${SHA}` ? Promise.resolve() : Promise.reject(new Error(`checksum ${got} does not match`));
        },
      }),
    );
    expect(err.message).toMatch(/^checksum zh:[0-9a-f]{64} does not match$/);
    expect(await listing(dir)).toEqual([]);
  });

  it('checks an expected size and is not retried for it', async () => {
    const dir = await mkdtemp(join(tmp, 'size-'));
    const err = await caught(client().download(`${server.origin}/data`, join(dir, 'pkg.zip'), { expectedSize: 10 }));
    expect(err).toMatchObject({ code: NetErrorCode.SIZE_MISMATCH, expected: '10', found: String(PAYLOAD.length) });
    expect(server.log).toHaveLength(1);
    expect(await listing(dir)).toEqual([]);
  });

  it('downloads over plain http too', async () => {
    const dir = await mkdtemp(join(tmp, 'plain-'));
    const res = await client().download(`${plain.origin}/data2`, join(dir, 'x.zip'));
    expect(res.size).toBe(PAYLOAD.length);
  });

  it('refuses non-http URLs', async () => {
    expect(await caught(client().get('file:///etc/passwd'))).toMatchObject({ code: 'USAGE' });
  });
});
