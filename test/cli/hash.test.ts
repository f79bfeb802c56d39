// `provkit hash` end to end: the installed entry point (bin/provkit.js, built
// dist/) run as a child process, as a user runs it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { runCli } from '../support/e2e.js';

const conformance = fileURLToPath(new URL('../fixtures/conformance/', import.meta.url));
const corpus = JSON.parse(readFileSync(`${conformance}hashes.json`, 'utf8')) as {
  packages: Record<string, { zh: string; h1?: string; h1_zip: string | null }>;
};
const pkg = (name: string): string => `${conformance}packages/${name}.zip`;

async function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runCli(args, { env: { ...process.env, ...env } });
  return { code, stdout, stderr };
}

describe('provkit hash', () => {
  it('prints exactly h1: then zh: for one zip', async () => {
    const r = await run(['hash', pkg('goreleaser')]);
    expect(r).toEqual({
      code: 0,
      stdout: `${corpus.packages['goreleaser']!.h1}\n${corpus.packages['goreleaser']!.zh}\n`,
      stderr: '',
    });
  });

  it('prints the h1: of a directory', async () => {
    const dir = fileURLToPath(new URL('../../src/addresses', import.meta.url));
    const r = await run(['hash', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^h1:[A-Za-z0-9+/]{43}=\n$/);
  });

  it('prints one block per path, headed by the path', async () => {
    const r = await run(['hash', pkg('stored'), pkg('deflate9')]);
    const s = corpus.packages['stored']!;
    const d = corpus.packages['deflate9']!;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${pkg('stored')}\n${s.h1}\n${s.zh}\n\n${pkg('deflate9')}\n${d.h1}\n${d.zh}\n`);
  });

  it('warns on stderr, naming the entries, when the two h1: forms differ', async () => {
    const r = await run(['hash', pkg('dir-entries')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${corpus.packages['dir-entries']!.h1}\n${corpus.packages['dir-entries']!.zh}\n`);
    expect(r.stderr).toContain('docs/');
    expect(r.stderr).toMatch(/^Warning: /);
  });

  it('-json gives a package_hash message per path with both h1: forms (after the version message; a refusal is a diagnostic too)', async () => {
    const r = await run(['-json', 'hash', pkg('duplicate-names'), pkg('traversal')]);
    expect(r.code).toBe(1);
    const all = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(all.map((l) => l['type'])).toEqual(['version', 'package_hash', 'package_hash', 'diagnostic']);
    expect(all[3]!['diagnostic']).toMatchObject({ code: 'ZIP_PATH_TRAVERSAL' });
    const lines = all.filter((l) => l['type'] === 'package_hash');
    expect(lines).toHaveLength(2);
    const dup = corpus.packages['duplicate-names']!;
    expect(lines[0]).toMatchObject({ path: pkg('duplicate-names'), h1: dup.h1, zh: dup.zh, h1_zip: dup.h1_zip });
    expect((lines[0]!['warnings'] as Array<{ code: string }>)[0]!.code).toBe('H1_FORMS_DIFFER');
    expect(lines[1]).toMatchObject({ path: pkg('traversal'), h1: null, h1_zip: corpus.packages['traversal']!.h1_zip });
    expect(lines[1]!['error']).toMatchObject({ code: 'ZIP_PATH_TRAVERSAL' });
  });

  it.each([
    ['a missing file', '/nonexistent/provider.zip', 'no such file or directory'],
    ['a truncated zip', pkg('truncated'), 'not a valid zip file'],
    ['a bad CRC', pkg('bad-crc'), 'checksum error'],
  ])('refuses %s with a message naming the file, exit 1', async (_what, path, reason) => {
    const r = await run(['hash', path]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(path);
    expect(r.stderr).toContain(reason);
  });

  it('accepts -flavor before or after the command, and rejects a bad one', async () => {
    expect((await run(['-flavor=terraform', 'hash', pkg('stored')])).code).toBe(0);
    expect((await run(['hash', pkg('stored'), '-flavor=terraform'])).code).toBe(0);
    const bad = await run(['hash', pkg('stored')], { PROVKIT_FLAVOR: 'nope' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('nope');
  });

  it('explains its usage', async () => {
    const r = await run(['hash']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Usage: provkit hash');
    expect((await run(['--help'])).stdout).toContain('Commands:');
  });
});
