// The documents name real files: every path of this repository that
// README.md, ARCHITECTURE.md, CONTRIBUTING.md or docs/*.md writes in
// backticks (`src/…`, `test/…`, `docs/…`, `bench/…`, `scripts/…`, `bin/…`,
// `etc/…`, `mirror-fixtures/…`, `.ci/…`; and a TypeScript file named from
// src/, `cli/wiring.ts`) exists. A moved or renamed file fails
// here with every stale mention, document and line, until the text follows.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const PATH = /(?<![\w./-])((?:src|test|docs|bench|scripts|bin|etc|mirror-fixtures|\.ci)\/[^\s`]*)/g;
/** A TypeScript file named relative to src/ (`cli/wiring.ts`). */
const SRC_TS = /(?<![\w./@-])([a-z][\w-]*\/[\w./-]*\.ts)(?![\w.])/g;

/**
 * Names in those forms that are not paths of this repository, per document,
 * with the reason.
 */
const NOT_OURS: Record<string, Record<string, string>> = {
  'docs/reference.md': { 'docs/readme.txt': 'an entry name inside a test vector’s zip' },
};

/** A path mentioned in a document. */
interface Mention {
  line: number;
  /** The path as the repository root sees it (`src/` added to a path named from src/). */
  path: string;
  /** As the document writes it, when that differs. */
  written?: string;
}

/** The repository paths written in backticks in `text` (fenced code blocks left out), with their line numbers. */
function mentionedPaths(text: string): Mention[] {
  const found: Mention[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      for (const m of span[1]!.matchAll(PATH)) {
        const path = m[1]!.replace(/[.,:;)]+$/, '').replace(/:\d+$/, '');
        // Upstream Go sources (`src/archive/zip/reader.go`): this repository has none.
        if (!path.endsWith('.go')) found.push({ line: i + 1, path });
      }
      for (const m of span[1]!.matchAll(SRC_TS)) {
        if (!PATH.test(m[1]!)) found.push({ line: i + 1, path: `src/${m[1]!}`, written: m[1]! });
        PATH.lastIndex = 0;
      }
    }
  });
  return found;
}

/** Entries of .gitignore that name one path (what a build or a benchmark makes: `dist/`, `bench/.work/`). */
function ignoredPrefixes(root: string): string[] {
  return readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !/[*?[\]!]/.test(l));
}

/** The files and directories under `dir` (relative, forward slashes). */
function walk(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    out.push(e.isDirectory() ? `${rel}/` : rel);
    if (e.isDirectory()) out.push(...walk(root, rel));
  }
  return out;
}

/**
 * Whether `path` names something under `root`: a file or directory, or, when
 * it is a pattern (`*`, `{a,b}`, `<NAME>`, `…`, or a word in capitals such as
 * `NAME`), at least one.
 */
function exists(root: string, path: string, tree: () => string[]): boolean {
  if (existsSync(join(root, path))) return true;
  const re = patternOf(path);
  return re !== undefined && tree().some((p) => re.test(p));
}

/** `path` as a regular expression over {@link walk}'s names, or undefined when it has no wildcard. */
function patternOf(path: string): RegExp | undefined {
  let out = '';
  let wild = false;
  for (let i = 0; i < path.length;) {
    const rest = path.slice(i);
    const m =
      /^(\*\*\/?|\*|…|<[^>]*>|\{[^}]*\})/.exec(rest) ??
      (/[A-Za-z]/.test(path[i - 1] ?? '') ? null : /^[A-Z][A-Z_]+(?![A-Za-z])/.exec(rest));
    if (m === null) {
      out += escape(path[i]!);
      i += 1;
      continue;
    }
    const t = m[0];
    wild = true;
    if (t === '**/') out += '(?:.*/)?';
    else if (t === '**') out += '.*';
    else if (t.startsWith('{')) out += `(?:${t.slice(1, -1).split(',').map(escape).join('|')})`;
    else out += '[^/]*';
    i += t.length;
  }
  return wild ? new RegExp(`^${out}/?$`) : undefined;
}

const escape = (s: string): string => s.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');

/** Every mention in `docs` (relative paths under `root`) of a path that does not exist, as `doc:line: path`. */
function missingPaths(root: string, docs: readonly string[]): string[] {
  const ignored = ignoredPrefixes(root);
  let files: string[] | undefined;
  const tree = (): string[] => (files ??= walk(root, ''));
  return docs.flatMap((doc) =>
    mentionedPaths(readFileSync(join(root, doc), 'utf8'))
      .filter(({ path }) => NOT_OURS[doc]?.[path] === undefined)
      .filter(({ path }) => !ignored.some((g) => path === g || path.startsWith(g.endsWith('/') ? g : `${g}/`)))
      .filter(({ path }) => !exists(root, path, tree))
      .map(({ line, path, written }) => `${doc}:${line}: \`${written ?? path}\` does not exist (${path})`),
  );
}

const DOCS = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

describe('the paths the documents name exist', () => {
  it('README.md, ARCHITECTURE.md, CONTRIBUTING.md and docs/*.md name only paths that exist', () => {
    expect(missingPaths(ROOT, DOCS)).toEqual([]);
  });

  it('finds the paths they name (hundreds), not none', () => {
    const all = DOCS.flatMap((d) => mentionedPaths(readFileSync(join(ROOT, d), 'utf8')));
    expect(all.length).toBeGreaterThan(200);
    expect(all.filter((m) => m.path.startsWith('src/')).length).toBeGreaterThan(50);
  });

  it('reads paths in backticks, with patterns, and reports each missing one with its document and line', () => {
    const text = [
      'The runner is `test/support/e2e.ts` (`runCli`), the rule in `src/no/such.ts:12`.',
      '```',
      'src/in/a/fence.ts',
      '```',
      'Commands: `src/cli/commands/NAME.ts`, `test/fixtures/zip/refuse/<ERROR_CODE>*.zip`, `src/nothing/*.ts`;',
      'Go’s `src/archive/zip/reader.go` is upstream; `npm run build && npx vitest run test/e2e/gone.test.ts`.',
      'From src/: `cli/main.ts`, `installer/gone.ts`; not paths: `@node-rs/crc32`, `archive/zip`.',
    ].join('\n');
    expect(mentionedPaths(text)).toEqual([
      { line: 1, path: 'test/support/e2e.ts' },
      { line: 1, path: 'src/no/such.ts' },
      { line: 5, path: 'src/cli/commands/NAME.ts' },
      { line: 5, path: 'test/fixtures/zip/refuse/<ERROR_CODE>*.zip' },
      { line: 5, path: 'src/nothing/*.ts' },
      { line: 6, path: 'test/e2e/gone.test.ts' },
      { line: 7, path: 'src/cli/main.ts', written: 'cli/main.ts' },
      { line: 7, path: 'src/installer/gone.ts', written: 'installer/gone.ts' },
    ]);
    let tree: string[] | undefined;
    const missing = mentionedPaths(text)
      .filter(({ path }) => !exists(ROOT, path, () => (tree ??= walk(ROOT, ''))))
      .map(({ line, path }) => `${line}: ${path}`);
    expect(missing).toEqual([
      '1: src/no/such.ts',
      '5: src/nothing/*.ts',
      '6: test/e2e/gone.test.ts',
      '7: src/installer/gone.ts',
    ]);
  });
});
