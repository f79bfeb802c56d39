// A dropped body is resumed from the last byte received, not from the last
// block that happened to reach the disk (src/net/download.ts, module comment):
// on a body failure the download's pipeline is ended, so every stage flushes
// what it holds into the temporary file. Stop 24's CI caught the old behaviour:
// on a loaded machine a connection dropped before the first block was written
// left nothing to resume from, and the download started over.
//
// The body here comes from a scripted FetchLike (no sockets: the point is the
// pipeline, and the timing must not depend on the machine), and a slow stage
// before the file holds blocks back when the body fails.
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ZhStream } from '../../src/hashing/index.js';
import { HttpClient, systemClock, type FetchInit, type FetchLike, type FetchResponse } from '../../src/net/index.js';

const TOTAL = 1024 * 1024 + 4321;
const PAYLOAD = Buffer.from(Array.from({ length: TOTAL }, (_, i) => (i * 31 + 7) & 0xff));
const SHA = createHash('sha256').update(PAYLOAD).digest('hex');
const ETAG = '"v1"';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'provkit-resume-keeps-'));
});
afterAll(() => rm(tmp, { recursive: true, force: true }));

/** Response headers as the client reads them. */
function headers(h: Record<string, string>): FetchResponse['headers'] {
  return { get: (name) => h[name.toLowerCase()] ?? null };
}

/** `bytes` in chunks of 16 KiB (a TLS record's size), then, when `dropAt` is reached, a connection reset. */
async function* body(bytes: Buffer, dropAt?: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += 16 * 1024) {
    if (dropAt !== undefined && at >= dropAt) break;
    const end = Math.min(bytes.length, at + 16 * 1024, dropAt ?? Infinity);
    await new Promise((resolve) => setImmediate(resolve));
    yield bytes.subarray(at, end);
  }
  if (dropAt !== undefined)
    throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' });
}

/** A registry file server in script form: each request's Range and the byte where its body drops. */
function scripted(drops: readonly number[]): { fetch: FetchLike; ranges: Array<string | undefined> } {
  const ranges: Array<string | undefined> = [];
  const fetch: FetchLike = (_url: string, init: FetchInit) => {
    const range = init.headers['range'];
    ranges.push(range);
    const dropAfter = drops[ranges.length - 1];
    const start = range === undefined ? 0 : Number(/^bytes=(\d+)-$/.exec(range)?.[1]);
    const rest = PAYLOAD.subarray(start);
    const common = { 'accept-ranges': 'bytes', etag: ETAG, 'content-length': String(rest.length) };
    return Promise.resolve({
      status: range === undefined ? 200 : 206,
      statusText: range === undefined ? 'OK' : 'Partial Content',
      headers: headers(
        range === undefined ? common : { ...common, 'content-range': `bytes ${start}-${TOTAL - 1}/${TOTAL}` },
      ),
      body: body(rest, dropAfter),
    });
  };
  return { fetch, ranges };
}

/** A stage that passes each chunk on a little later: blocks are still on their way to the file when the body fails. */
function slow(): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      setTimeout(() => done(null, chunk), 2);
    },
  });
}

describe('a dropped body keeps every byte received', () => {
  it('resumes from exactly the byte where each drop happened, the file and its zh: whole', async () => {
    // Drops at byte 300 KiB + 123 of the first body and 200 KiB + 5 of the second:
    // neither is a multiple of the 256 KiB blocks the file is written in.
    const first = 300 * 1024 + 123;
    const second = 200 * 1024 + 5;
    const { fetch, ranges } = scripted([first, second]);
    const client = new HttpClient({
      fetch,
      clock: { ...systemClock, sleep: () => Promise.resolve() },
      connectTimeoutMs: 10_000,
      idleTimeoutMs: 10_000,
      downloadRetries: 4,
    });
    const dir = await mkdtemp(join(tmp, 'dl-'));
    let zh: ZhStream | undefined;
    const res = await client.download('https://files.example.test/pkg.zip', join(dir, 'pkg.zip'), {
      transforms: () => [slow(), (zh = new ZhStream())],
    });
    expect(ranges).toEqual([undefined, `bytes=${first}-`, `bytes=${first + second}-`]);
    expect(res).toMatchObject({ size: TOTAL, attempts: 3, resumes: 2 });
    expect(zh?.result().zh.text).toBe(`zh:${SHA}`);
    expect((await readFile(join(dir, 'pkg.zip'))).equals(PAYLOAD)).toBe(true);
    expect(await readdir(dir)).toEqual(['pkg.zip']);
  });
});
