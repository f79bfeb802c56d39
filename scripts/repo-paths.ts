// Paths of this repository named in text: what test/docs/doc-paths.test.ts
// checks in the documents (README.md, ARCHITECTURE.md, CONTRIBUTING.md,
// docs/*.md) and scripts/citations.ts in the comments of src/, test/ and
// scripts/. One reading of "a path of this repository" and one rule of
// whether it exists, so that a moved file fails both the same way.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A path under one of the repository's top-level folders; a pattern's `<…>` is part of it. */
const IN_FOLDER = String.raw`(?:src|test|docs|bench|scripts|bin|etc|mirror-fixtures|\.ci)/(?:<[^>\s]*>|[^\s\x60'"()<>[\]])*`;
/** The repository's top-level files that documents and comments name. */
const TOP_FILE = String.raw`[\w-]+\.config\.[cm]?[jt]s|package(?:-lock)?\.json|tsconfig(?:\.[\w-]+)?\.json|\.pre-commit-hooks\.yaml|\.prettierrc\.json|\.prettierignore|\.gitignore|\.git-blame-ignore-revs|(?:README|ARCHITECTURE|CONTRIBUTING)\.md`;
const PATH = new RegExp(String.raw`(?<![\w./@-])(${IN_FOLDER}|(?:${TOP_FILE})(?![\w.-]))`, 'g');
/** A TypeScript file named relative to src/ (`cli/wiring.ts`). */
const SRC_TS = /(?<![\w./@-])([a-z][\w-]*\/[\w./-]*\.ts)(?![\w.])/g;

/** The documents a clone ships and the tests hold to the tree: README.md, ARCHITECTURE.md, CONTRIBUTING.md, docs/*.md. */
export function documents(root: string): string[] {
  return [
    'README.md',
    'ARCHITECTURE.md',
    'CONTRIBUTING.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
}

/** A path named in a text. */
export interface Mention {
  /** Offset in the text. */
  readonly at: number;
  /** The path as the repository root sees it (`src/` added to a path named from src/). */
  readonly path: string;
  /** As the text writes it, when that differs. */
  readonly written?: string;
}

/**
 * The repository paths `text` names: a path under one of the repository's
 * top-level folders (`src/…`, `test/…`, `docs/…`, `bench/…`, `scripts/…`,
 * `bin/…`, `etc/…`, `mirror-fixtures/…`, `.ci/…`), a top-level file of the
 * repository (`eslint.config.js`, `package.json`, `CONTRIBUTING.md`, …), or a
 * TypeScript file named from src/ (`cli/main.ts`). Trailing punctuation, a
 * `:LINE` suffix and a `#fragment` are dropped; upstream Go sources (`src/archive/zip/reader.go`)
 * are not this repository's.
 */
export function pathsIn(text: string): Mention[] {
  const found: Mention[] = [];
  const taken: Array<[number, number]> = [];
  for (const m of text.matchAll(PATH)) {
    const path = m[1]!
      .replace(/#.*$/, '')
      .replace(/[.,:;!?]+$/, '')
      .replace(/:\d+(?:[-–]\d+)?$/, '');
    taken.push([m.index, m.index + m[0].length]);
    if (!path.endsWith('.go')) found.push({ at: m.index, path });
  }
  for (const m of text.matchAll(SRC_TS)) {
    if (taken.some(([s, e]) => m.index >= s && m.index < e)) continue;
    found.push({ at: m.index, path: `src/${m[1]!}`, written: m[1]! });
  }
  return found.sort((a, b) => a.at - b.at);
}

/** A file named without its folder: `select-version.ts`, `eslint-no-cycle.mjs`. */
const BARE_CODE_FILE = /(?<![\w./@-])([\w][\w.-]*\.(?:ts|mts|js|mjs|cjs))(?![\w./-])/g;

/**
 * The code files `text` names without a folder (`select-version.ts`): no
 * path, so all {@link fileNameExists} can say is whether the repository has
 * a file of that name.
 */
export function fileNamesIn(text: string): Array<{ readonly at: number; readonly name: string }> {
  return [...text.matchAll(BARE_CODE_FILE)].map((m) => ({ at: m.index, name: m[1]! }));
}

/** Whether a file of the repository outside what .gitignore leaves out (`dist/`) is called `name`. */
export function fileNameExists(root: string, name: string, tree: () => readonly string[]): boolean {
  const ignored = ignoredPrefixes(root);
  return tree().some(
    (p) =>
      (p === name || p.endsWith(`/${name}`)) &&
      !ignored.some((g) => p === g || p.startsWith(g.endsWith('/') ? g : `${g}/`)),
  );
}

/** The files and directories of the repository (relative, forward slashes; directories end in `/`). */
export function repoTree(root: string, dir = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git') continue;
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    out.push(e.isDirectory() ? `${rel}/` : rel);
    if (e.isDirectory()) out.push(...repoTree(root, rel));
  }
  return out;
}

/** Entries of .gitignore that name one path (what a build or a benchmark makes: `dist/`, `bench/.work/`). */
function ignoredPrefixes(root: string): string[] {
  return readFileSync(join(root, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !/[*?[\]!]/.test(l))
    .map((l) => l.replace(/^\//, ''));
}

/**
 * Whether the repository at `root` has what `path` names: a file or
 * directory; when it is a pattern (`*`, `{a,b}`, `<NAME>`, `…`, or a word in
 * capitals such as `NAME`), at least one match; or something a build or a
 * benchmark makes (an entry of .gitignore: `dist/`, `bench/.work/`).
 */
export function pathExists(root: string, path: string, tree: () => readonly string[]): boolean {
  if (existsSync(join(root, path))) return true;
  if (ignoredPrefixes(root).some((g) => path === g || path.startsWith(g.endsWith('/') ? g : `${g}/`))) return true;
  const re = patternOf(path);
  return re !== undefined && tree().some((p) => re.test(p));
}

/** `path` as a regular expression over {@link repoTree}'s names, or undefined when it has no wildcard. */
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
