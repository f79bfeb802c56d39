// Network faults at the HttpClient level, against the in-repo file server:
// drops resumed with Range where the server allows it, full restarts where
// it does not, a changed resource, a lying Content-Range, stalls, 5xx and 429
// bursts, truncated, oversized and wrong-length bodies. After each: the
// destination is complete and verified, or absent; no temporary file remains.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ErrorCode, ProvkitError } from '../../src/errors.js';
import { ZhStream } from '../../src/hashing/index.js';
import {
  createNodeFetch,
  HttpClient,
  httpTuningFromEnv,
  type HttpClientOptions,
  type NodeFetch,
} from '../../src/net/index.js';
import { startServer, type TestServer } from '../support/servers/http-server.js';
import { recordFault } from './report.js';

const PAYLOAD = randomBytes(3 * 1024 * 1024 + 17);
const SHA = createHash('sha256').update(PAYLOAD).digest('hex');
let content = PAYLOAD;

let server: TestServer;
let nf: NodeFetch;
let tmp: string;
beforeAll(async () => {
  server = await startServer({
    tls: false,
    handler: () => ({ headers: { 'content-type': 'application/zip' }, body: content }),
  });
  nf = createNodeFetch({ env: {} });
  tmp = await mkdtemp(join(tmpdir(), 'provkit-faults-net-'));
});
afterAll(async () => {
  nf.close();
  await server.close();
  await rm(tmp, { recursive: true, force: true });
});
/** This test's requests for the package (the server log spans the file). */
let logStart = 0;
const pkgRequests = (): TestServer['log'] => server.log.slice(logStart).filter((r) => r.pathname === '/pkg.zip');
beforeEach(() => {
  logStart = server.log.length;
});
afterEach(() => {
  server.clearFaults();
  server.setRanges(false);
  content = PAYLOAD;
});

function client(opts: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({
    fetch: nf.fetch,
    connectTimeoutMs: 1000,
    idleTimeoutMs: 300,
    backoff: { minMs: 5, maxMs: 20 },
    ...opts,
  });
}

/** Downloads with a zh: hasher and a verify hook that insists on the payload's zh:. */
async function fetchVerified(c: HttpClient, dir: string): Promise<{ zh: string; resumes: number; attempts: number }> {
  let zh: ZhStream | undefined;
  const res = await c.download(`${server.origin}/pkg.zip`, join(dir, 'pkg.zip'), {
    transforms: () => [(zh = new ZhStream())],
    verify: () => {
      const got = zh?.result().zh.text;
      if (got !== `zh:${SHA}`)
        return Promise.reject(new ProvkitError('CHECKSUM_MISMATCH', `zh mismatch: ${got ?? 'none'}`));
      return Promise.resolve();
    },
  });
  return { zh: zh?.result().zh.text ?? '', resumes: res.resumes ?? 0, attempts: res.attempts };
}

async function caught(p: Promise<unknown>): Promise<ProvkitError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ProvkitError) return err;
    throw err;
  }
  throw new Error('expected a failure');
}

describe('resumable downloads', () => {
  it('resumes a dropped body with Range, hashing every byte exactly once', async () => {
    const dir = await mkdtemp(join(tmp, 'resume-'));
    server.setRanges(true);
    server.setFault('/pkg.zip', { kind: 'drop', after: 1024 * 1024, times: 1 });
    const r = await fetchVerified(client(), dir);
    expect(r).toMatchObject({ zh: `zh:${SHA}`, resumes: 1, attempts: 2 });
    const [first, second] = pkgRequests();
    expect(first?.headers['range']).toBeUndefined();
    expect(second?.headers['range']).toMatch(/^bytes=\d+-$/);
    expect(second?.headers['if-range']).toMatch(/^"/);
    expect(second?.status).toBe(206);
    expect((await readFile(join(dir, 'pkg.zip'))).equals(PAYLOAD)).toBe(true);
    expect(await readdir(dir)).toEqual(['pkg.zip']);
    recordFault({
      group: 'network',
      fault: 'connection dropped after 1 MiB of 3 MiB (server has Range)',
      command: 'HttpClient.download',
      outcome: `ok, resumed from byte ${second?.rangeStart ?? '?'} (206), zh: verified`,
      state: 'complete file',
      rerun: '-',
    });
  });

  it('resumes twice when the connection drops twice', async () => {
    const dir = await mkdtemp(join(tmp, 'resume2-'));
    server.setRanges(true);
    server.setFault('/pkg.zip', { kind: 'drop', after: 700 * 1024, times: 2 });
    const r = await fetchVerified(client(), dir);
    expect(r).toMatchObject({ zh: `zh:${SHA}`, resumes: 2, attempts: 3 });
    expect(await readdir(dir)).toEqual(['pkg.zip']);
    recordFault({
      group: 'network',
      fault: 'connection dropped twice mid-body (server has Range)',
      command: 'HttpClient.download',
      outcome: 'ok, resumed twice, zh: verified',
      state: 'complete file',
      rerun: '-',
    });
  });

  it('starts over when the server has no Range support', async () => {
    const dir = await mkdtemp(join(tmp, 'norange-'));
    server.setFault('/pkg.zip', { kind: 'drop', after: 1024 * 1024, times: 1 });
    const r = await fetchVerified(client(), dir);
    expect(r).toMatchObject({ zh: `zh:${SHA}`, resumes: 0, attempts: 2 });
    expect(pkgRequests().every((q) => q.headers['range'] === undefined)).toBe(true);
    expect(await readdir(dir)).toEqual(['pkg.zip']);
    recordFault({
      group: 'network',
      fault: 'connection dropped mid-body (no Range support)',
      command: 'HttpClient.download',
      outcome: 'ok, full restart, zh: verified',
      state: 'complete file',
      rerun: '-',
    });
  });

  it('starts over when the resource changed between attempts (If-Range)', async () => {
    const dir = await mkdtemp(join(tmp, 'changed-'));
    server.setRanges(true);
    server.setFault('/pkg.zip', { kind: 'drop', after: 1024 * 1024, times: 1 });
    const other = Buffer.from(PAYLOAD);
    other[0] = (other[0] ?? 0) ^ 1;
    // The second request sees other content: its ETag no longer matches, so a full 200 comes.
    const c = client({ events: { onRetry: () => void (content = other) } });
    const err = await caught(fetchVerified(c, dir));
    expect(err.message).toMatch(/zh mismatch/);
    const second = pkgRequests()[1];
    expect(second?.headers['range']).toBeDefined();
    expect(second?.status).toBe(200);
    expect(await readdir(dir)).toEqual([]);
    recordFault({
      group: 'network',
      fault: 'resource replaced between attempts (If-Range mismatch)',
      command: 'HttpClient.download',
      outcome: 'full 200 instead of 206; new bytes fail zh: verification (not used)',
      state: 'nothing written',
      rerun: '-',
    });
  });

  it('refuses a 206 whose Content-Range does not continue the kept bytes, and starts over', async () => {
    const dir = await mkdtemp(join(tmp, 'badrange-'));
    server.setRanges(true);
    server.setFault('/pkg.zip', { kind: 'drop', after: 1024 * 1024, times: 1 });
    server.setFault('/pkg.zip', {
      kind: 'replace',
      body: (b) => b,
      headers: { 'content-range': 'bytes 0-9/10' },
      times: 1,
    });
    const reasons: string[] = [];
    const r = await fetchVerified(client({ events: { onRetry: (n) => void reasons.push(n.reason) } }), dir);
    expect(r).toMatchObject({ zh: `zh:${SHA}`, resumes: 0 });
    // The refusal names the byte the kept prefix ends at (it said "byte 0" before issue 12).
    expect(reasons[1]).toMatch(
      /the resumed response's Content-Range "bytes 0-9\/10" does not continue byte [1-9]\d* \(after 2 attempts\)$/,
    );
    expect(await readdir(dir)).toEqual(['pkg.zip']);
    recordFault({
      group: 'network',
      fault: '206 with a Content-Range that does not continue the download',
      command: 'HttpClient.download',
      outcome: 'refused, partial discarded, full restart, zh: verified',
      state: 'complete file',
      rerun: '-',
    });
  });
});

describe('faults that end with nothing written', () => {
  const cases: Array<[string, (s: TestServer) => void, string, Partial<HttpClientOptions>?]> = [
    [
      'a stall past the idle timeout on every attempt',
      (s) => s.setFault('/pkg.zip', { kind: 'stall', phase: 'body' }),
      ErrorCode.NET_TIMEOUT,
    ],
    [
      'no response headers within the connect timeout',
      (s) => s.setFault('/pkg.zip', { kind: 'stall', phase: 'headers' }),
      ErrorCode.NET_TIMEOUT,
      { connectTimeoutMs: 200 },
    ],
    ['503 on every attempt', (s) => s.setFault('/pkg.zip', { kind: 'status', status: 503 }), ErrorCode.NET_HTTP_STATUS],
    ['a close-delimited body cut short', (s) => s.setFault('/pkg.zip', { kind: 'truncate' }), 'CHECKSUM_MISMATCH'],
    [
      'an oversized body (junk appended)',
      (s) => s.setFault('/pkg.zip', { kind: 'replace', body: (b) => Buffer.concat([b, Buffer.alloc(4096)]) }),
      'CHECKSUM_MISMATCH',
    ],
    [
      'a Content-Length 7 bytes too long on every attempt',
      (s) => s.setFault('/pkg.zip', { kind: 'wrong-length', delta: 7 }),
      ErrorCode.NET_SIZE_MISMATCH,
    ],
    ['a tampered body (one byte flipped)', (s) => s.setFault('/pkg.zip', { kind: 'tamper' }), 'CHECKSUM_MISMATCH'],
    [
      'a dropped connection on every attempt (with Range)',
      (s) => (s.setRanges(true), s.setFault('/pkg.zip', { kind: 'drop', after: 100_000 })),
      ErrorCode.NET_SIZE_MISMATCH,
    ],
  ];
  it.each(cases)('%s', async (name, arm, code, opts) => {
    const dir = await mkdtemp(join(tmp, 'fail-'));
    arm(server);
    const err = await caught(fetchVerified(client({ downloadRetries: 2, ...opts }), dir));
    expect(err.code).toBe(code);
    expect(await readdir(dir)).toEqual([]);
    recordFault({
      group: 'network',
      fault: name,
      command: 'HttpClient.download',
      outcome: `failed: ${err.code}`,
      state: 'nothing written, no temp file',
      rerun: '-',
    });
  });
});

describe('transient faults that retries absorb', () => {
  const cases: Array<[string, (s: TestServer) => void]> = [
    [
      'a burst of three 502/503/504',
      (s) => [502, 503, 504].forEach((status) => s.setFault('/pkg.zip', { kind: 'status', status, times: 1 })),
    ],
    [
      'a 429 with Retry-After: 0',
      (s) => s.setFault('/pkg.zip', { kind: 'status', status: 429, headers: { 'retry-after': '0' }, times: 1 }),
    ],
    ['one stall past the idle timeout', (s) => s.setFault('/pkg.zip', { kind: 'stall', phase: 'body', times: 1 })],
    ['one wrong Content-Length', (s) => s.setFault('/pkg.zip', { kind: 'wrong-length', delta: 7, times: 1 })],
  ];
  it.each(cases)('%s', async (name, arm) => {
    const dir = await mkdtemp(join(tmp, 'ok-'));
    arm(server);
    const r = await fetchVerified(client({ downloadRetries: 3 }), dir);
    expect(r.zh).toBe(`zh:${SHA}`);
    expect(await readdir(dir)).toEqual(['pkg.zip']);
    recordFault({
      group: 'network',
      fault: name,
      command: 'HttpClient.download',
      outcome: `ok after ${r.attempts} attempts`,
      state: 'complete file',
      rerun: '-',
    });
  });
});

describe('PROVKIT_HTTP_TUNING', () => {
  it('parses timeouts, retries and backoff, and refuses nonsense', () => {
    expect(
      httpTuningFromEnv({ PROVKIT_HTTP_TUNING: 'connect=100, idle=200,retries=5,backoff=10,retry-after-max=30' }),
    ).toEqual({
      connectTimeoutMs: 100,
      idleTimeoutMs: 200,
      downloadRetries: 5,
      backoff: { minMs: 10, maxMs: 30_000 },
      maxRetryAfterMs: 30,
    });
    expect(httpTuningFromEnv({ TF_PROVIDER_DOWNLOAD_RETRY: '4' })).toEqual({ downloadRetries: 4 });
    expect(httpTuningFromEnv({})).toEqual({});
    expect(() => httpTuningFromEnv({ PROVKIT_HTTP_TUNING: 'idle=soon' })).toThrow(
      /invalid PROVKIT_HTTP_TUNING item "idle=soon"/,
    );
  });
});
