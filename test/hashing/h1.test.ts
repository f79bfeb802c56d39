// dirhash Hash1 over (names, open): expected values are derived independently
// here (the summary text is built in the test, as golang/mod's hash_test.go
// does with `h` and `htop`), plus the golden vectors the reference produced
// (docs/reference.md §2.4).
import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { isProvkitError } from '../../src/errors.js';
import { EMPTY_H1, hash1, hash1FromDigests } from '../../src/hashing/index.js';
import { displayName } from '../../src/hashing/index.js';

const sha = (b: Buffer | string): Buffer => createHash('sha256').update(b).digest();
/** `h`: one summary line. */
const h = (name: Buffer, content: Buffer | string): Buffer =>
  Buffer.concat([Buffer.from(`${sha(content).toString('hex')}  `), name, Buffer.from('\n')]);
/** `htop`: the h1 of a summary. */
const htop = (lines: Buffer[]): string => `h1:${sha(Buffer.concat(lines)).toString('base64')}`;

function memory(files: Array<[Buffer | string, Buffer | string]>): {
  names: Buffer[];
  open: (n: Uint8Array) => Buffer;
} {
  const map = new Map<string, Buffer>();
  const names: Buffer[] = [];
  for (const [name, content] of files) {
    const n = Buffer.isBuffer(name) ? name : Buffer.from(name);
    names.push(n);
    map.set(n.toString('latin1'), Buffer.isBuffer(content) ? content : Buffer.from(content));
  }
  return { names, open: (n) => map.get(Buffer.from(n).toString('latin1'))! };
}

describe('hash1', () => {
  it('gives the reference value for the empty list (V1)', async () => {
    expect((await hash1([], () => Buffer.alloc(0))).text).toBe(EMPTY_H1);
    expect(EMPTY_H1).toBe(htop([]));
  });

  it('builds the summary from sorted names, two spaces, newline', async () => {
    const { names, open } = memory([
      ['b.txt', 'bee\n'],
      ['a.txt', 'ay\n'],
    ]);
    const expected = htop([h(Buffer.from('a.txt'), 'ay\n'), h(Buffer.from('b.txt'), 'bee\n')]);
    expect((await hash1(names, open)).text).toBe(expected);
  });

  it('sorts by raw bytes, not by UTF-16 code units (V4)', async () => {
    const others = ['😀', '～', 'a-b', 'a/b', 'a.b', 'B', 'a0'];
    const files: Array<[string, string]> = [
      ['terraform-provider-order', 'x\n'],
      ...others.map((n): [string, string] => [n, n]),
    ];
    const { names, open } = memory(files);
    const got = (await hash1(names, open)).text;
    expect(got).toBe('h1:tzvP8SSMKLUe8Uy/hj+ap9+UWqyYmNuAgGSmIMseGUM=');
    // Independent derivation with a byte sort; the UTF-16 sort gives the wrong value.
    const byBytes = files.map(([n]) => Buffer.from(n)).sort((a, b) => Buffer.compare(a, b));
    expect(got).toBe(htop(byBytes.map((n) => h(n, files.find(([f]) => Buffer.from(f).equals(n))![1]))));
    const byUtf16 = files.map(([n]) => n).sort();
    expect(htop(byUtf16.map((n) => h(Buffer.from(n), files.find(([f]) => f === n)![1])))).toBe(
      'h1:qVM/mrzzRCRA2DBK7kvppn4sFHsklHe3RqPaJwGzEj8=',
    );
  });

  it('hashes raw non-UTF-8 name bytes as they are (V5)', async () => {
    const latin = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0xff, 0x80]);
    const { names, open } = memory([
      ['terraform-provider-latin', 'x\n'],
      [latin, 'latin\n'],
    ]);
    expect((await hash1(names, open)).text).toBe('h1:vXKothFEYKv39lm1pUP08X6bXBl8JW/20QcyIHtuaG4=');
    expect(displayName(latin)).toBe('caf\\xe9\\xff\\x80');
  });

  it('lists a duplicated name twice, as HashZip does', () => {
    const d = sha('second\n');
    const name = Buffer.from('terraform-provider-dup');
    expect(
      hash1FromDigests([
        { name, sha256: d },
        { name, sha256: d },
      ]).text,
    ).toBe(htop([h(name, 'second\n'), h(name, 'second\n')]));
  });

  it('refuses names with a newline, before opening anything', async () => {
    let opened = 0;
    const names = [Buffer.from('a'), Buffer.from('b\nc')];
    const err = await hash1(names, () => {
      opened += 1;
      return Buffer.from('x');
    }).catch((e: unknown) => e);
    expect(isProvkitError(err, 'HASH_NEWLINE_IN_NAME')).toBe(true);
    expect((err as Error).message).toBe('dirhash: filenames with newlines are not supported');
    expect(opened).toBe(1); // 'a' sorts first and is opened; 'b\nc' is refused
  });

  it('reads streamed content', async () => {
    async function* chunks(): AsyncIterable<Uint8Array> {
      yield Buffer.from('hel');
      await Promise.resolve();
      yield Buffer.from('lo\n');
    }
    expect((await hash1([Buffer.from('f')], () => chunks())).text).toBe(htop([h(Buffer.from('f'), 'hello\n')]));
  });

  it('does not reorder the caller’s list', async () => {
    const names = [Buffer.from('z'), Buffer.from('a')];
    await hash1(names, () => Buffer.alloc(0));
    expect(names.map(String)).toEqual(['z', 'a']);
  });
});
