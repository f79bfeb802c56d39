/**
 * issue 12: the pure rules of a response body (`src/net/body.ts`) and of a
 * resumed download (`src/net/download.ts`), table-style: which length a body
 * is checked against, the size verdict, which 206 continues a kept prefix,
 * and what a 200 says about resuming.
 */
import { Readable } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { BodyReader, checkedLength, lengthMismatch } from '../../src/net/body.js';
import { Hop } from '../../src/net/exchange.js';
import { systemClock } from '../../src/net/types.js';
import { continuesAt, parseContentRange, resumeInfo, strongValidator } from '../../src/net/download.js';
import { ErrorCode } from '../../src/errors.js';

function headers(h: Record<string, string>): { get(name: string): string | null } {
  return { get: (name) => h[name] ?? null };
}

describe('checkedLength (the Content-Length a body is checked against)', () => {
  it.each([
    { h: {}, length: undefined },
    { h: { 'content-length': '42' }, length: 42 },
    { h: { 'content-length': ' 42 ' }, length: 42 },
    { h: { 'content-length': '0' }, length: 0 },
    { h: { 'content-length': '-1' }, length: undefined },
    { h: { 'content-length': '4.2' }, length: undefined },
    { h: { 'content-length': '42, 42' }, length: undefined },
    { h: { 'content-length': 'abc' }, length: undefined },
    { h: { 'content-length': '42', 'content-encoding': 'gzip' }, length: undefined },
    { h: { 'content-length': '42', 'content-encoding': ' Identity ' }, length: 42 },
    { h: { 'content-length': '42', 'content-encoding': 'br' }, length: undefined },
  ])('$h → $length', ({ h, length }) => {
    expect(checkedLength(headers(h))).toBe(length);
  });
});

describe('lengthMismatch (the body-length rule)', () => {
  const url = 'https://example.test/x';
  it.each([
    { total: undefined, received: 0, mismatch: false },
    { total: undefined, received: 123, mismatch: false },
    { total: 10, received: 10, mismatch: false },
    { total: 0, received: 0, mismatch: false },
    { total: 10, received: 4, mismatch: true },
    { total: 10, received: 11, mismatch: true },
    { total: 0, received: 1, mismatch: true },
  ])('declared $total, received $received → mismatch: $mismatch', ({ total, received, mismatch }) => {
    const e = lengthMismatch(total, received, url);
    expect(e !== undefined).toBe(mismatch);
    if (e === undefined) return;
    expect(e.message).toBe(`incorrect response size: expected ${total} bytes, but got ${received} bytes from ${url}`);
    expect(e).toMatchObject({
      code: ErrorCode.NET_SIZE_MISMATCH,
      url,
      expected: String(total),
      found: String(received),
    });
  });

  it('keeps the error that cut the body short as the cause', () => {
    const reset = new Error('socket hang up');
    expect(lengthMismatch(10, 3, url, reset)?.cause).toBe(reset);
    expect(lengthMismatch(10, 3, url)?.cause).toBeUndefined();
  });
});

describe('a resumed download continues exactly at the kept prefix', () => {
  it.each([
    { value: 'bytes 100-199/200', range: { start: 100, end: 199, total: 200 } },
    { value: ' BYTES 0-0/1 ', range: { start: 0, end: 0, total: 1 } },
    { value: 'bytes 100-99/200', range: undefined },
    { value: 'bytes 100-200/200', range: undefined },
    { value: 'bytes 100-199/*', range: undefined },
    { value: 'bytes */200', range: undefined },
    { value: 'items 100-199/200', range: undefined },
    { value: null, range: undefined },
  ])('Content-Range $value → $range', ({ value, range }) => {
    expect(parseContentRange(value)).toEqual(range);
  });

  it.each([
    { value: 'bytes 100-199/200', kept: 100, total: 200, continues: true },
    { value: 'bytes 100-199/200', kept: 100, total: undefined, continues: true },
    { value: 'bytes 100-199/200', kept: 99, total: 200, continues: false },
    { value: 'bytes 100-199/200', kept: 100, total: 300, continues: false },
    { value: 'bytes 100-149/200', kept: 100, total: 200, continues: false },
    { value: 'bytes 0-199/200', kept: 100, total: 200, continues: false },
    { value: null, kept: 100, total: 200, continues: false },
  ])('$value after $kept of $total bytes → continues: $continues', ({ value, kept, total, continues }) => {
    expect(continuesAt(parseContentRange(value), kept, total)).toBe(continues);
  });

  it('If-Range takes a strong ETag only (RFC 9110 §13.1.5)', () => {
    const etags = ['"abc"', ' "abc" ', 'W/"abc"', 'abc', null];
    expect(etags.map(strongValidator)).toEqual(['"abc"', '"abc"', undefined, undefined, undefined]);
  });

  it.each([
    {
      h: { 'content-length': '200', 'accept-ranges': 'bytes', etag: '"v1"' },
      info: { total: 200, validator: '"v1"', resumable: true },
    },
    {
      h: {
        'content-length': '200',
        'accept-ranges': 'none, bytes',
        etag: 'W/"v1"',
        'last-modified': 'Wed, 01 Jan 2025 00:00:00 GMT',
      },
      info: { total: 200, validator: 'Wed, 01 Jan 2025 00:00:00 GMT', resumable: true },
    },
    {
      h: { 'content-length': '200', 'accept-ranges': 'none' },
      info: { total: 200, validator: undefined, resumable: false },
    },
    {
      h: { 'content-length': '200', 'accept-ranges': 'bytesx' },
      info: { total: 200, validator: undefined, resumable: false },
    },
    { h: { 'accept-ranges': 'bytes' }, info: { total: undefined, validator: undefined, resumable: false } },
    {
      h: { 'content-length': '200', 'accept-ranges': 'bytes', 'content-encoding': 'gzip' },
      info: { total: undefined, validator: undefined, resumable: false },
    },
  ])('a 200 with $h → $info', ({ h, info }) => {
    expect(resumeInfo(headers(h))).toEqual(info);
  });
});

describe('BodyReader: its state is read-only to its callers', () => {
  it('reports the failure, what was thrown and the bytes received through getters that cannot be assigned', async () => {
    const url = new URL('https://example.test/short');
    const reader = new BodyReader(
      {
        status: 200,
        statusText: 'OK',
        headers: headers({ 'content-length': '10' }),
        body: Readable.from([new Uint8Array(4)]),
      },
      new Hop(systemClock, url, undefined),
      { maxBytes: undefined, idleTimeoutMs: 0, progressIntervalMs: 0, events: [], clock: systemClock },
    );
    expect(reader.failure).toBeUndefined();
    expect(reader.received).toBe(0);
    const result = await reader.readAll();
    expect(result.kind).toBe('verdict');
    expect(reader.failure).toBe(result);
    expect(reader.thrown).toBe(result.kind === 'verdict' ? result.error : undefined);
    expect(reader.thrown).toMatchObject({ code: ErrorCode.NET_SIZE_MISMATCH, expected: '10', found: '4' });
    expect(reader.received).toBe(4);
    // Getters only: an assignment is a type error, and (ES modules are strict) a TypeError.
    expect(() => {
      // @ts-expect-error -- read-only
      reader.failure = undefined;
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error -- read-only
      reader.thrown = undefined;
    }).toThrow(TypeError);
    expect(() => {
      // @ts-expect-error -- read-only
      reader.received = 0;
    }).toThrow(TypeError);
    expect(reader.failure).toBe(result);
    expect(reader.received).toBe(4);
  });
});
