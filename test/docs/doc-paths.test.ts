// The documents name real files: every path of this repository that
// README.md, ARCHITECTURE.md, CONTRIBUTING.md or docs/*.md writes in
// backticks (`src/…`, `test/…`, `docs/…`, `bench/…`, `scripts/…`, `bin/…`,
// `etc/…`, `mirror-fixtures/…`, `.ci/…`; a top-level file such as
// `eslint.config.js`; a TypeScript file named from src/, `cli/wiring.ts`:
// scripts/repo-paths.ts, which scripts/citations.ts uses for comments too)
// exists, and so does every relative markdown link and the heading its
// `#fragment` names. A moved or renamed file fails here with every stale
// mention, document and line, until the text follows.
import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { documents, fileNameExists, fileNamesIn, pathExists, pathsIn, repoTree } from '../../scripts/repo-paths.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

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
  /** A link's `#fragment`: a heading of the linked document. */
  anchor?: string;
  /** A code file named without its folder (`select-version.ts`): some file of the repository has that name. */
  bare?: true;
}

/**
 * The repository paths `text` (the document `doc`) names, fenced code blocks
 * left out, with their line numbers: every path in backticks
 * (scripts/repo-paths.ts says which names are paths), every code file named
 * in backticks without its folder (`select-version.ts`), and every relative
 * markdown link (`[text](docs/NAME.md#part)`, resolved from the document's
 * folder).
 */
function mentionedPaths(text: string, doc = 'README.md'): Mention[] {
  const found: Mention[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (line.trimStart().startsWith('```')) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      const paths = pathsIn(span[1]!);
      for (const m of paths)
        found.push({ line: i + 1, path: m.path, ...(m.written === undefined ? {} : { written: m.written }) });
      for (const m of fileNamesIn(span[1]!))
        if (!paths.some((p) => p.at === m.at)) found.push({ line: i + 1, path: m.name, bare: true });
    }
    for (const link of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = link[1]!;
      if (/^[a-z][\w+.-]*:/i.test(target)) continue;
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? doc : posix.normalize(posix.join(dirname(doc), file));
      found.push({
        line: i + 1,
        path,
        ...(path === file ? {} : { written: file === '' ? target : file }),
        ...(anchor === undefined ? {} : { anchor }),
      });
    }
  });
  return found;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown document's headings. */
function anchorsOf(root: string, doc: string): Set<string> {
  return new Set(
    readFileSync(join(root, doc), 'utf8')
      .split('\n')
      .filter((l) => /^#{1,6} /.test(l))
      .map((l) => slug(l.replace(/^#+ /, ''))),
  );
}

/** What of `text` (the document `doc`) names a path or an anchor that does not exist, as `doc:line: path`. */
function missingIn(root: string, doc: string, text: string, tree: () => readonly string[]): string[] {
  return mentionedPaths(text, doc)
    .filter(({ path }) => NOT_OURS[doc]?.[path] === undefined)
    .flatMap(({ line, path, written, anchor, bare }) => {
      if (bare) return fileNameExists(root, path, tree) ? [] : [`${doc}:${line}: no file is called \`${path}\``];
      if (!pathExists(root, path, tree)) return [`${doc}:${line}: \`${written ?? path}\` does not exist (${path})`];
      if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(root, path).has(anchor))
        return [`${doc}:${line}: ${path} has no heading #${anchor}`];
      return [];
    });
}

let repo: string[] | undefined;
const tree = (): string[] => (repo ??= repoTree(ROOT));

const DOCS = documents(ROOT);

describe('the paths the documents name exist', () => {
  it('README.md, ARCHITECTURE.md, CONTRIBUTING.md and docs/*.md name only paths that exist', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['ARCHITECTURE.md', 'CONTRIBUTING.md', 'docs/reference.md']));
    expect(DOCS.flatMap((doc) => missingIn(ROOT, doc, readFileSync(join(ROOT, doc), 'utf8'), tree))).toEqual([]);
  });

  it('finds the paths they name (hundreds), not none', () => {
    const all = DOCS.flatMap((d) => mentionedPaths(readFileSync(join(ROOT, d), 'utf8'), d));
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
    const missing = mentionedPaths(text)
      .filter(({ path }) => !pathExists(ROOT, path, tree))
      .map(({ line, path }) => `${line}: ${path}`);
    expect(missing).toEqual([
      '1: src/no/such.ts',
      '5: src/nothing/*.ts',
      '6: test/e2e/gone.test.ts',
      '7: src/installer/gone.ts',
    ]);
  });

  it('reads top-level files and relative links, resolved from the document, with their headings', () => {
    const text = [
      'Lint: `eslint.config.js`, `eslint.config.mjs`; `package.json`; see [the reference](reference.md#gone),',
      '[json](json-ui.md), [api](../etc/provkit.api.md), [nowhere](no-such.md), [web](https://example.com/x.md).',
      'Named alone: `select-version.ts`, `lock-one.ts`; formats are not files here: `VERSION.json`.',
    ].join('\n');
    expect(mentionedPaths(text, 'docs/x.md')).toEqual([
      { line: 1, path: 'eslint.config.js' },
      { line: 1, path: 'eslint.config.mjs' },
      { line: 1, path: 'package.json' },
      { line: 1, path: 'docs/reference.md', written: 'reference.md', anchor: 'gone' },
      { line: 2, path: 'docs/json-ui.md', written: 'json-ui.md' },
      { line: 2, path: 'etc/provkit.api.md', written: '../etc/provkit.api.md' },
      { line: 2, path: 'docs/no-such.md', written: 'no-such.md' },
      { line: 3, path: 'select-version.ts', bare: true },
      { line: 3, path: 'lock-one.ts', bare: true },
    ]);
    expect(missingIn(ROOT, 'docs/x.md', text, tree)).toEqual([
      'docs/x.md:1: `eslint.config.mjs` does not exist (eslint.config.mjs)',
      'docs/x.md:1: docs/reference.md has no heading #gone',
      'docs/x.md:2: `no-such.md` does not exist (docs/no-such.md)',
      'docs/x.md:3: no file is called `lock-one.ts`',
    ]);
  });

  it('a wrong path or link added to ARCHITECTURE.md or CONTRIBUTING.md fails, named with its line', () => {
    for (const doc of ['ARCHITECTURE.md', 'CONTRIBUTING.md']) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      const lines = text.split('\n').length;
      const wrong = `${text}\nSee \`src/installer/lock-one.ts\`, \`scripts/eslint-no-cycles.mjs\` and [the guide](docs/guide.md).\n`;
      expect(missingIn(ROOT, doc, wrong, tree)).toEqual([
        `${doc}:${lines + 1}: \`src/installer/lock-one.ts\` does not exist (src/installer/lock-one.ts)`,
        `${doc}:${lines + 1}: \`scripts/eslint-no-cycles.mjs\` does not exist (scripts/eslint-no-cycles.mjs)`,
        `${doc}:${lines + 1}: \`docs/guide.md\` does not exist (docs/guide.md)`,
      ]);
    }
  });
});
