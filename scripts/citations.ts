// Citations in comments: every rule a comment cites must be followable from a
// clone of this repository (CONTRIBUTING.md house style 10).
//
//   npx tsx scripts/citations.ts            rewrite old-style citations in place
//   npx tsx scripts/citations.ts --check    list what is wrong; exit 1 if anything
//
// What is checked (test/docs/citations.test.ts runs the check):
// - src/: every `§S` and `item N` in a comment is a docs/reference.md citation
//   (the text `docs/reference.md` before it, in the same parenthesis or
//   sentence), the section S exists, the item N exists and lies in S;
//   no comment cites an issue tracker, `spec §…`, `house style §…`.
// - src/, test/, scripts/, eslint.config.js: no comment names a document
//   outside the repository (`opentofu-reference.md`, `terraform-observed.md`,
//   `peers.md`, `style-models.md`, `../shared`), and every path of this
//   repository a comment names exists (scripts/repo-paths.ts, the reading
//   test/docs/doc-paths.test.ts applies to the documents: `src/…`, `test/…`,
//   `docs/…`, a top-level file, a TypeScript file named from src/ or from the
//   commenting file's folder or one above it). A path after an upstream
//   project (`nodejs/node src/env.cc`, `opentofu/opentofu internal/…`) is
//   that project's.
//
// What the rewrite does (comments only: it edits the text of comment tokens
// found by TypeScript's scanner and nothing else):
// 1. the literal replacements of SPECIFIC below (one-off citations of the
//    old shared documents, issue numbers, house style);
// 2. in src/: `spec §S` → `docs/reference.md §S`; `spec item N` and a bare
//    `item N` → `docs/reference.md §S item N` (S: the item's section in
//    docs/reference.md); a bare `§S` → `docs/reference.md §S`; `vector Vn` →
//    `docs/reference.md §2.4 vector Vn`. A citation already anchored by
//    `docs/reference.md` earlier in its parenthesis or sentence is left as it
//    is, unless its item lies in another section than the one named there:
//    then it gets its own `§S`.
// Re-running it is harmless: a second run changes nothing.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import ts from 'typescript';

import { type Mention, pathExists, pathsIn, repoTree } from './repo-paths.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** One-off literal replacements: [file (relative), old text, new text]. */
const SPECIFIC: ReadonlyArray<readonly [string, string, string]> = [
  ['eslint.config.js', '(house style §4.2)', '(CONTRIBUTING.md, the layer rule)'],
  ['src/net/client.ts', '(house style §4.3 item 3)', '(CONTRIBUTING.md house style 3)'],
  ['src/net/types.ts', '(house style §4.3 item 7)', '(CONTRIBUTING.md house style 7)'],
  [
    'src/cli/wiring.ts',
    '(house style: a single factory maps configuration to sources)',
    '(CONTRIBUTING.md house style 8: a single factory maps configuration to sources)',
  ],
  [
    'src/net/node-fetch.ts',
    'counts (issue #5, the incremental mirror run).',
    'counts (bench/results-commands.md: the second mirror run into the same target).',
  ],
  [
    'src/addresses/hostname.ts',
    '(issue #5, the incremental mirror run).',
    '(bench/results-commands.md: the second mirror run into the same target).',
  ],
  [
    'src/hashing/store.ts',
    '(peers.md (d) 1,\n * "Lock hashes for N platforms without N full downloads"; issue #5)',
    '(docs/hash-store.md:\n * lock hashes for N platforms without N full downloads)',
  ],
  ['src/hashing/zip-stream.ts', '(issue #5; peers.md (d) 2)', '(ARCHITECTURE.md, "The life of a lock run")'],
  [
    'src/installer/lock.ts',
    'locked from it without a download (issue #5).',
    'locked from it without a download (docs/hash-store.md).',
  ],
  [
    'src/installer/lock.ts',
    '(item 91, terraform-observed.md "What each source\n * records")',
    '(docs/reference.md §6.1 item 91, §10 items 139–141)',
  ],
  [
    'src/hashing/zip-package.ts',
    'name is ever created (issue 11 #17).',
    'name is ever created (docs/file-modes.md, "Names with control characters").',
  ],
  [
    'src/hashing/zip-package.ts',
    '(spec §2.3 items 26–28,\n * terraform-observed.md "Two different h1 functions")',
    '(docs/reference.md §2.3 items 26–28,\n * §10 items 146–148)',
  ],
  [
    'src/installer/mirror-unpacked.ts',
    'The target is a shared place (issue 11 #17):',
    'The target is a shared place (docs/file-modes.md):',
  ],
  [
    'src/installer/package-dirs.ts',
    'when the run put nothing in them (issue 11 #17).',
    'when the run put nothing in them (docs/file-modes.md).',
  ],
  ['src/installer/install.ts', 'Where it writes (issue 11 #17):', 'Where it writes (docs/file-modes.md):'],
  [
    'src/cli/common.ts',
    "the CLI configuration's credentials for the mirror host (issue 11 #19).",
    "the CLI configuration's credentials for the mirror host (see netMirrorSourceFor).",
  ],
  ['src/cli/main.ts', 'before or after the subcommand (issue #2); the', 'before or after the subcommand; the'],
  [
    'src/config/requirements.ts',
    '(terraform-observed; `providers lock`',
    '(docs/reference.md §10 item 138; `providers lock`',
  ],
  [
    'src/config/load.ts',
    '"Module not installed" (terraform-observed; confirmed',
    '"Module not installed" (docs/reference.md §10 item 138; confirmed',
  ],
  [
    'src/hashing/zip-reader.ts',
    '(terraform-observed.md, "Two different h1 functions")',
    '(docs/reference.md §10 item 149)',
  ],
  ['src/lockfile/serialize.ts', 'spec §3.2, terraform-observed.md)', 'docs/reference.md §3.2, §10 items 131–134)'],
  [
    'src/installer/extract.ts',
    'spec §8.1 items 105–111, terraform-observed.md "Consequences of\n * Go\'s archive/zip + go-getter extraction")',
    'docs/reference.md §8.1 items 105–111,\n * §10 item 149)',
  ],
  [
    'src/sources/credentials.ts',
    '(terraform-observed: only a literal',
    '(docs/reference.md §7 item 103: only a literal',
  ],
  [
    'src/sources/fs-mirror.ts',
    'the name matched case-insensitively (terraform-observed).',
    'the name matched case-insensitively (docs/reference.md §10 item 143).',
  ],
  ['src/sources/registry/checksums.ts', 'terraform-observed "What each source records")', '§10 item 139)'],
  [
    'src/sources/net-mirror.ts',
    '(terraform-observed: `https://host/mirror` makes every',
    '(docs/reference.md §10 item 142: `https://host/mirror` makes every',
  ],
  [
    'src/sources/net-mirror.ts',
    'fetched without credentials (terraform-observed).',
    'fetched without credentials (docs/reference.md §4.3 item 68).',
  ],
  ['src/addresses/provider.ts', '(spec item 10, terraform-observed)', '(docs/reference.md §1.1 item 10, §10 item 133)'],
  [
    'src/bundles/create.ts',
    'packages of other providers have the same file names (issue 11 #1).',
    'packages of other providers have the same file names (docs/reliability.md).',
  ],
  [
    'src/installer/install.ts',
    '(archives of different packages share file names, issue 11 #1)',
    '(archives of different packages share file names, docs/reliability.md)',
  ],
  ['src/installer/lock.ts', 'source under two hosts), issue 11 #1.', 'source under two hosts), docs/reliability.md.'],
  ['src/sources/fetch/fetch.ts', '(issue 11 #1: two packages', '(docs/reliability.md: two packages'],
  [
    'test/e2e/package-identity.ts',
    '(terraform-observed.md,\n * "What each source records")',
    '(docs/reference.md §10 item 139)',
  ],
  ['test/hashing/h1.test.ts', '(opentofu-reference.md §2.4)', '(docs/reference.md §2.4)'],
  ['test/hashing/zip-fixtures.test.ts', 'opentofu-reference.md §2.4 V2 and V3', 'docs/reference.md §2.4 V2 and V3'],
  [
    'test/hashing/dir.test.ts',
    '(opentofu-reference.md §2.3 item 25, vector V6)',
    '(docs/reference.md §2.3 item 25, §2.4 vector V6)',
  ],
  [
    'test/cli/install.test.ts',
    '(terraform-observed.md, verified with acme-labs/beta)',
    '(docs/reference.md §10 item 141, verified with acme-labs/beta)',
  ],
  [
    'test/cli/lock-registry.test.ts',
    'terraform-observed.md "What each source',
    'docs/reference.md §10 item 139, "What each source',
  ],
  ['test/sources/checksums.test.ts', '(terraform-observed parsing rules)', '(docs/reference.md §10 item 139)'],
  [
    'test/e2e/net-mirror-credentials.test.ts',
    '(terraform-observed; sources/net-mirror.ts)',
    '(docs/reference.md §4.3 item 68; sources/net-mirror.ts)',
  ],
  ['test/addresses/constraints.test.ts', '// terraform-observed.md', '// docs/reference.md §10 item 136'],
];

/** Documents outside the repository that comments must not cite. */
const OUTSIDE = /opentofu-reference|terraform-observed|peers\.md|style-models|\.\.\/shared\b/;
/** Forms of citation src/ comments no longer use. */
const OLD_FORMS = /\bspec (?:§|items?\b)|house style §|\bissue #\d+|\bissue \d+ #\d+/;

/** An upstream project named just before a path (`nodejs/node src/env.cc`): the path is that project's. */
const UPSTREAM_BEFORE = /\b[\w.-]+\/[\w.-]+\s+$/;

/**
 * Whether `m`, named in a comment of `rel`, is a path of the repository at
 * `root`: from the root, or (a name relative to a folder, `commands/version.ts`)
 * from the commenting file's folder or one above it.
 */
function pathNamed(root: string, rel: string, m: Mention, tree: () => readonly string[]): boolean {
  if (pathExists(root, m.path, tree)) return true;
  if (m.written === undefined) return false;
  for (let dir = dirname(rel); dir !== '.' && dir !== ''; dir = dirname(dir))
    if (existsSync(join(root, dir, m.written))) return true;
  return false;
}

interface Reference {
  sections: Set<string>;
  /** Item number → its deepest section (`4.1`, `7`). */
  itemSection: Map<number, string>;
}

export function loadReference(root = ROOT): Reference {
  const sections = new Set<string>();
  const itemSection = new Map<number, string>();
  let current = '0';
  for (const line of readFileSync(join(root, 'docs/reference.md'), 'utf8').split('\n')) {
    const h = /^#{2,3} (\d+(?:\.\d+)?)\.? /.exec(line);
    if (h?.[1] !== undefined) {
      current = h[1];
      sections.add(current);
      continue;
    }
    const item = /^(\d+)\. /.exec(line);
    if (item?.[1] !== undefined) itemSection.set(Number(item[1]), current);
  }
  return { sections, itemSection };
}

/** Whether section `s` (`4.1`, `5`, `3.3–3.4`) contains `inner` (`4.1`). */
function sectionContains(s: string, inner: string): boolean {
  const [from, to] = s.split(/[–-]/);
  if (from === undefined) return false;
  if (to === undefined) return inner === from || inner.startsWith(`${from}.`);
  const key = (x: string): number[] => x.split('.').map(Number);
  const [a, b, c] = [key(from), key(to), key(inner)];
  const cmp = (x: number[], y: number[]): number => (x[0] ?? 0) - (y[0] ?? 0) || (x[1] ?? 0) - (y[1] ?? 0);
  return cmp(a, c) <= 0 && cmp(c, b) <= 0;
}

function files(dir: string, exts: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (exts.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Tokens after which a `/` divides; anywhere else it starts a regular expression. */
const ENDS_EXPRESSION = new Set<ts.SyntaxKind>([
  ts.SyntaxKind.Identifier,
  ts.SyntaxKind.NumericLiteral,
  ts.SyntaxKind.BigIntLiteral,
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
  ts.SyntaxKind.CloseParenToken,
  ts.SyntaxKind.CloseBracketToken,
  ts.SyntaxKind.CloseBraceToken,
  ts.SyntaxKind.ThisKeyword,
  ts.SyntaxKind.SuperKeyword,
  ts.SyntaxKind.TrueKeyword,
  ts.SyntaxKind.FalseKeyword,
  ts.SyntaxKind.NullKeyword,
  ts.SyntaxKind.PlusPlusToken,
  ts.SyntaxKind.MinusMinusToken,
]);

/** [start, end) of every comment, adjacent `//` lines merged into one. */
export function commentRanges(text: string): Array<[number, number]> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, false, ts.LanguageVariant.Standard, text);
  const ranges: Array<[number, number]> = [];
  // Open `{` and template substitutions, so a `}` that resumes a template is rescanned as one.
  const braces: Array<'brace' | 'template'> = [];
  let prev: ts.SyntaxKind | undefined;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if (kind === ts.SyntaxKind.SingleLineCommentTrivia || kind === ts.SyntaxKind.MultiLineCommentTrivia) {
      const start = scanner.getTokenStart();
      const end = scanner.getTokenEnd();
      const last = ranges[ranges.length - 1];
      if (
        kind === ts.SyntaxKind.SingleLineCommentTrivia &&
        last &&
        /^\s*$/.test(text.slice(last[1], start)) &&
        text.slice(last[0], last[0] + 2) === '//'
      )
        last[1] = end;
      else ranges.push([start, end]);
      continue;
    }
    if (kind === ts.SyntaxKind.WhitespaceTrivia || kind === ts.SyntaxKind.NewLineTrivia) continue;
    if (
      (kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) &&
      (prev === undefined || !ENDS_EXPRESSION.has(prev))
    ) {
      kind = scanner.reScanSlashToken();
    } else if (kind === ts.SyntaxKind.OpenBraceToken) braces.push('brace');
    else if (kind === ts.SyntaxKind.TemplateHead) braces.push('template');
    else if (kind === ts.SyntaxKind.CloseBraceToken) {
      if (braces[braces.length - 1] === 'template') {
        kind = scanner.reScanTemplateToken(false);
        if (kind === ts.SyntaxKind.TemplateTail) braces.pop();
      } else braces.pop();
    }
    prev = kind;
  }
  return ranges;
}

const TOKEN =
  /docs\/reference\.md|RFC \d+|\(|\)|(?<=[\s(,])§(\d+(?:\.\d+)?(?:[–-]\d+(?:\.\d+)?)?)|\b(items?) (\d+(?:\.\d+)?(?:(?:, | and |–|-)\d+(?:\.\d+)?)*)|\b(vectors?) (V\d)|[.;:](?=\s|$)/g;

interface Found {
  /** Position in the comment text. */
  at: number;
  kind: 'section' | 'items' | 'vector';
  text: string;
  anchored: boolean;
  /** The section the citation names (anchored citations). */
  section?: string;
  items?: number[];
}

/** The citations of one comment, each with whether `docs/reference.md` anchors it. */
function scan(comment: string): Found[] {
  const found: Found[] = [];
  const stack: Array<{ anchored: boolean; section?: string | undefined }> = [{ anchored: false }];
  let rfc = false;
  for (const m of comment.matchAll(TOKEN)) {
    const top = stack[stack.length - 1] ?? { anchored: false };
    const t = m[0];
    if (t === 'docs/reference.md') {
      top.anchored = true;
      top.section = undefined;
    } else if (t.startsWith('RFC ')) rfc = true;
    else if (t === '(')
      stack.push({ anchored: top.anchored, ...(top.section === undefined ? {} : { section: top.section }) });
    else if (t === ')') {
      if (stack.length > 1) stack.pop();
    } else if (m[1] !== undefined) {
      if (rfc) {
        rfc = false;
        continue;
      }
      found.push({ at: m.index, kind: 'section', text: t, anchored: top.anchored, section: m[1] });
      if (top.anchored) top.section = m[1];
    } else if (m[3] !== undefined) {
      const items = [...m[3].matchAll(/\d+(?:\.\d+)?/g)].map((x) => Math.floor(Number(x[0])));
      const range = /–|-/.test(m[3]) && items.length === 2 ? { from: items[0] ?? 0, to: items[1] ?? 0 } : undefined;
      found.push({
        at: m.index,
        kind: 'items',
        text: t,
        anchored: top.anchored,
        ...(top.section === undefined ? {} : { section: top.section }),
        items: range ? [range.from, range.to] : items,
      });
    } else if (m[5] !== undefined) {
      found.push({ at: m.index, kind: 'vector', text: t, anchored: top.anchored });
    } else if (stack.length === 1) {
      // A sentence ends: a citation does not carry into the next one.
      top.anchored = false;
      top.section = undefined;
    }
  }
  return found;
}

/** Rewrites the citations of one src/ comment (see the file comment). */
function rewriteComment(comment: string, ref: Reference): string {
  let text = comment.replace(/\bspec (?=§|items?\b)/g, '');
  // One citation at a time: each insertion can anchor the ones after it.
  for (let guard = 0; guard < 200; guard++) {
    const found = scan(text);
    // An anchored item whose section is another one than the citation names gets its own `§S`.
    const stray = found.find(
      (x) =>
        x.anchored &&
        x.kind === 'items' &&
        x.section !== undefined &&
        (x.items ?? []).some((n) => !sectionContains(x.section ?? '', ref.itemSection.get(n) ?? x.section ?? '')),
    );
    const strayAt = stray ? ref.itemSection.get(stray.items?.[0] ?? 0) : undefined;
    if (stray && strayAt !== undefined) {
      text = `${text.slice(0, stray.at)}§${strayAt} ${text.slice(stray.at)}`;
      continue;
    }
    const f = found.find((x) => !x.anchored);
    if (!f) break;
    let insert = 'docs/reference.md ';
    if (f.kind === 'items') {
      const secs = new Set((f.items ?? []).map((n) => ref.itemSection.get(n)));
      const only = [...secs][0];
      if (secs.size === 1 && only !== undefined) insert += `§${only} `;
    } else if (f.kind === 'vector') insert += '§2.4 ';
    text = text.slice(0, f.at) + insert + text.slice(f.at);
  }
  return text;
}

export interface Problem {
  file: string;
  line: number;
  message: string;
}

function lineOf(text: string, at: number): number {
  return text.slice(0, at).split('\n').length;
}

/** What is wrong with the citations of the repository at `root` (empty when all is well). */
export function checkCitations(root = ROOT): Problem[] {
  const ref = loadReference(root);
  const problems: Problem[] = [];
  const targets = [
    ...files(join(root, 'src'), /\.ts$/),
    ...files(join(root, 'test'), /\.(ts|mts)$/),
    ...files(join(root, 'scripts'), /\.(ts|mjs)$/),
    join(root, 'eslint.config.js'),
  ];
  let tree: string[] | undefined;
  const repo = (): string[] => (tree ??= repoTree(root));
  for (const file of targets) {
    const rel = relative(root, file);
    if (rel === 'scripts/citations.ts') continue;
    const text = readFileSync(file, 'utf8');
    const inSrc = rel.startsWith('src/');
    for (const [start, end] of commentRanges(text)) {
      const comment = text.slice(start, end);
      const outside = OUTSIDE.exec(comment);
      if (outside)
        problems.push({
          file: rel,
          line: lineOf(text, start + outside.index),
          message: `cites ${outside[0]}, which is not in the repository`,
        });
      for (const m of pathsIn(comment)) {
        if (UPSTREAM_BEFORE.test(comment.slice(0, m.at)) || pathNamed(root, rel, m, repo)) continue;
        problems.push({
          file: rel,
          line: lineOf(text, start + m.at),
          message: `names ${m.written ?? m.path}, which does not exist`,
        });
      }
      if (!inSrc) continue;
      const old = OLD_FORMS.exec(comment);
      if (old)
        problems.push({ file: rel, line: lineOf(text, start + old.index), message: `old citation form "${old[0]}"` });
      for (const f of scan(comment)) {
        const line = lineOf(text, start + f.at);
        if (!f.anchored) {
          problems.push({ file: rel, line, message: `"${f.text}" is not a docs/reference.md citation` });
          continue;
        }
        if (f.kind === 'section') {
          for (const s of (f.section ?? '').split(/[–-]/))
            if (!ref.sections.has(s)) problems.push({ file: rel, line, message: `docs/reference.md has no §${s}` });
        } else if (f.kind === 'items') {
          const items = f.items ?? [];
          for (const n of items) {
            const s = ref.itemSection.get(n);
            if (s === undefined) problems.push({ file: rel, line, message: `docs/reference.md has no item ${n}` });
            else if (f.section !== undefined && !sectionContains(f.section, s))
              problems.push({ file: rel, line, message: `item ${n} is in §${s}, not §${f.section}` });
          }
        }
      }
    }
  }
  return problems;
}

/** Applies the rewrite to the repository at `root`; returns the files it changed. */
export function rewriteCitations(root = ROOT): { changed: string[]; unmatched: string[] } {
  const ref = loadReference(root);
  const changed = new Set<string>();
  const unmatched: string[] = [];
  const edit = (rel: string, f: (text: string) => string): void => {
    const path = join(root, rel);
    const before = readFileSync(path, 'utf8');
    const after = f(before);
    if (after !== before) {
      writeFileSync(path, after);
      changed.add(rel);
    }
  };
  // Comment-only edits: `f` sees each comment's text, never code.
  const inComments = (rel: string, f: (comment: string) => string): void =>
    edit(rel, (text) => {
      let out = '';
      let pos = 0;
      for (const [start, end] of commentRanges(text)) {
        out += text.slice(pos, start) + f(text.slice(start, end));
        pos = end;
      }
      return out + text.slice(pos);
    });
  for (const [rel, from, to] of SPECIFIC) {
    let hit = false;
    try {
      inComments(rel, (c) => {
        if (!c.includes(from)) return c;
        hit = true;
        return c.split(from).join(to);
      });
    } catch {
      // A file that is gone.
    }
    if (!hit && !readFileSafe(join(root, rel)).includes(to)) unmatched.push(`${rel}: ${JSON.stringify(from)}`);
  }
  for (const file of files(join(root, 'src'), /\.ts$/)) inComments(relative(root, file), (c) => rewriteComment(c, ref));
  return { changed: [...changed].sort(), unmatched };
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes('--check')) {
    const problems = checkCitations();
    for (const p of problems) console.log(`${p.file}:${p.line}: ${p.message}`);
    console.log(
      problems.length === 0 ? 'citations: all point into the repository' : `citations: ${problems.length} problem(s)`,
    );
    process.exitCode = problems.length === 0 ? 0 : 1;
  } else {
    const { changed, unmatched } = rewriteCitations();
    for (const f of changed) console.log(`rewrote ${f}`);
    for (const u of unmatched) console.log(`not found (already changed elsewhere?): ${u}`);
  }
}
