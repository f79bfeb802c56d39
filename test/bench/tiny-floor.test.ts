// bench/tiny-floor.cjs, the Node floor the commands benchmark measures the
// tiny lock against: run as a user runs it (plain node, a child process), it
// must compute the reference's zh: and h1: of every package it is given
// (mirror-fixtures/hashes.json: terraform's h1:, sha256sum's zh:) and write
// its lock file atomically, or fail with exit 1 and a message. A floor that
// did less work, or wrong work, would make the benchmark's ratio meaningless.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { runNode } from '../support/e2e.js';

const FLOOR = fileURLToPath(new URL('../../bench/tiny-floor.cjs', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../mirror-fixtures/', import.meta.url));
const reference = JSON.parse(readFileSync(join(FIXTURES, 'hashes.json'), 'utf8')) as {
  packages: Record<string, { zh: string; h1: string }>;
};

const dir = mkdtempSync(join(tmpdir(), 'provkit-tiny-floor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runFloor(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runNode([FLOOR, ...args], { env: process.env, timeoutMs: 30_000 });
}

describe('bench/tiny-floor.cjs', () => {
  it("computes the reference's zh: and h1: of every package and writes its lock file", async () => {
    // Every package of the demo mirror, both versions: more than the demo lock needs.
    const paths = Object.keys(reference.packages).sort();
    expect(paths.length).toBeGreaterThanOrEqual(15);
    const lock = join(dir, 'floor.lock');
    const r = await runFloor([join(FIXTURES, 'config/main.tf'), lock, ...paths.map((p) => join(FIXTURES, p))]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const printed = new Map(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([file, h1, zh]) => [file!, { h1: h1!, zh: zh! }]),
    );
    expect(printed.size).toBe(paths.length);
    for (const p of paths) expect(printed.get(p.split('/').at(-1)!), p).toEqual(reference.packages[p]);
    expect(readFileSync(lock, 'utf8').trim().split('\n')).toHaveLength(paths.length);
    // Atomic: nothing but the lock file is left beside it.
    expect(readdirSync(dir)).toEqual(['floor.lock']);
  });

  it('fails with exit 1 and a message, and writes nothing, when a package is not a zip', async () => {
    const bad = join(dir, 'bad.zip');
    writeFileSync(bad, 'not a zip at all');
    const lock = join(dir, 'bad.lock');
    const r = await runFloor([join(FIXTURES, 'config/main.tf'), lock, bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('tiny-floor: not a zip\n');
    expect(readdirSync(dir).sort()).toEqual(['bad.zip', 'floor.lock']);
  });
});
