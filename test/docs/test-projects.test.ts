// The two vitest projects (vitest.config.ts): `npm run test:unit` runs pure
// code in the test's own process; every file that may start a process or open
// a socket is listed in E2E_FILES and runs with `npm run test:e2e`. This reads
// each test file's imports, following those into test/ (the support helpers),
// and checks the list both ways. test/support/unit-guard.ts enforces the same
// rule at run time.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { E2E_FILES } from '../../vitest.config.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Modules that start a process or open a socket when used. The library's own
 * network code (src/) is not here: a unit test may import it and pass a test
 * double; unit-guard.ts stops one that reaches the network anyway.
 */
const CROSSING = /^node:(child_process|net|http|https|http2|tls|dgram|cluster)$/;

/** Test files (relative, forward slashes), sorted. */
function testFiles(dir = 'test'): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...testFiles(rel));
    else if (e.name.endsWith('.test.ts')) out.push(rel);
  }
  return out.sort();
}

/** The crossing modules `file` imports, directly or through the files it imports under test/. */
function crossings(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const found: string[] = [];
  const text = readFileSync(join(ROOT, file), 'utf8');
  for (const m of text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
    const spec = m[1]!;
    if (CROSSING.test(spec)) found.push(`${spec} in ${file}`);
    else if (spec.startsWith('.')) {
      const target = posix.join(posix.dirname(file), spec).replace(/\.js$/, '.ts');
      if (target.startsWith('test/') && existsSync(join(ROOT, target))) found.push(...crossings(target, seen));
    }
  }
  return found;
}

/** Whether `file` is matched by the E2E_FILES entry `entry` (`DIR/**` or one file's path). */
const matches = (entry: string, file: string): boolean =>
  entry.endsWith('/**') ? file.startsWith(entry.slice(0, -2)) : file === entry;
const isE2e = (file: string): boolean => E2E_FILES.some((p) => matches(p, file));

describe('the unit and end-to-end test projects', () => {
  const files = testFiles();

  it('every entry of E2E_FILES names test files that exist', () => {
    expect(E2E_FILES.filter((p) => !files.some((f) => matches(p, f)))).toEqual([]);
  });

  it('no unit test file imports what starts a process or opens a socket', () => {
    const offenders = files
      .filter((f) => !isE2e(f))
      .flatMap((f) => crossings(f).map((c) => `${f}: ${c}: list it in E2E_FILES in vitest.config.ts`));
    expect(offenders).toEqual([]);
  });

  it('every end-to-end test file does (else it is a unit test: take it off E2E_FILES)', () => {
    expect(files.filter((f) => isE2e(f) && crossings(f).length === 0)).toEqual([]);
  });

  it('no describe or it title names an issue number instead of the behaviour it pins', () => {
    const titled = /\b(?:describe|it|test)(?:\s*\.\w+(?:\([^)]*\))?)*\s*\(\s*['"`](issue \d+[^'"`]*)/gi;
    const offenders = files.flatMap((f) =>
      [...readFileSync(join(ROOT, f), 'utf8').matchAll(titled)].map((m) => `${f}: ${m[1]!}`),
    );
    expect(offenders).toEqual([]);
  });

  it('finds an import through a support helper, and none in a pure file', () => {
    expect(crossings('test/support/e2e.ts')).toContain('node:child_process in test/support/e2e.ts');
    expect(crossings('test/addresses/provider.test.ts')).toEqual([]);
  });
});

/**
 * The folders of test/ that test no one layer of src/, and what each holds (CONTRIBUTING.md, "How we test").
 */
const CROSS_CUTTING: Record<string, string> = {
  bench: "the benchmarks' own tests (floors, the WAN proxy)",
  docs: 'the repository against its documents and house rules',
  e2e: 'provkit at the process boundary, per behaviour',
  faults: 'the fault matrix and signals at the process boundary',
  fixtures: 'data, each with its generator',
  package: 'the packed package, from a consumer project',
  support: 'the harness: runners, servers, zips',
};

describe('test/ mirrors src/', () => {
  it("every folder of test/ is a folder of src/ (that layer's tests) or one of the cross-cutting ones", () => {
    const folders = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    const layers = new Set(folders('src'));
    expect(folders('test').filter((f) => !layers.has(f) && CROSS_CUTTING[f] === undefined)).toEqual([]);
    expect(Object.keys(CROSS_CUTTING).filter((f) => layers.has(f) || !existsSync(join(ROOT, 'test', f)))).toEqual([]);
  });
});
