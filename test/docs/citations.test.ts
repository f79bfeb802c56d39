// Every citation in a comment can be followed from a clone of the repository
// (CONTRIBUTING.md house style 10): src/ cites docs/reference.md (sections and items
// that exist, each item in the section named) or upstream files, and no
// comment in src/, test/ or scripts/ names a document outside the repository.
// scripts/citations.ts does the work; `npx tsx scripts/citations.ts` rewrites
// old-style citations, `--check` lists what is wrong.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { checkCitations, commentRanges, loadReference, rewriteCitations } from '../../scripts/citations.js';
import { documents } from '../../scripts/repo-paths.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('citations point into the repository', () => {
  it('docs/reference.md numbers its items 1…N in order, each under a section', () => {
    const ref = loadReference(ROOT);
    const numbers = [...ref.itemSection.keys()];
    expect(numbers.length).toBeGreaterThanOrEqual(156);
    expect(numbers).toEqual(numbers.map((_, i) => i + 1));
    expect(ref.itemSection.get(52)).toBe('4.1');
    expect(ref.itemSection.get(131)).toBe('10.1');
  });

  it('no comment cites anything a clone cannot follow', () => {
    expect(checkCitations(ROOT).map((p) => `${p.file}:${p.line}: ${p.message}`)).toEqual([]);
  });

  it('no document a clone ships cites an issue tracker number either (CONTRIBUTING.md house style 10)', () => {
    const cited = documents(ROOT).flatMap((doc) =>
      readFileSync(join(ROOT, doc), 'utf8')
        .split('\n')
        .flatMap((line, i) => [...line.matchAll(/\bissues? #?\d+(?: #\d+)?/gi)].map((m) => `${doc}:${i + 1}: ${m[0]}`)),
    );
    expect(cited).toEqual([]);
  });

  it('finds comments only, not code that looks like them', () => {
    const text = [
      "const a = '// not a comment (spec §1)';",
      'const re = /\\/\\* not one either/;',
      'const t = `${a} /* still a string */ ${`nested ${1}`}`;',
      'const d = 4 / 2; // a comment (spec §2.3 item 23)',
      '/* another (item 90) */',
    ].join('\n');
    expect(commentRanges(text).map(([s, e]) => text.slice(s, e))).toEqual([
      '// a comment (spec §2.3 item 23)',
      '/* another (item 90) */',
    ]);
  });

  it('rewrites old citations mechanically, and only in comments', () => {
    const root = mkdtempSync(join(tmpdir(), 'provkit-citations-'));
    try {
      mkdirSync(join(root, 'docs'));
      mkdirSync(join(root, 'src', 'x'), { recursive: true });
      mkdirSync(join(root, 'test'));
      mkdirSync(join(root, 'scripts'));
      writeFileSync(join(root, 'eslint.config.js'), '');
      writeFileSync(
        join(root, 'docs', 'reference.md'),
        '## 1. One\n\n### 1.1 A\n\n1. first\n2. second\n\n## 2. Two\n\n3. third\n\n### 2.4 Vectors\n',
      );
      const before = [
        '/**',
        ' * Thing (spec §1.1 items 1–2, §2 item 3).',
        ' * Then (item 2) and (items 1, 3); vector V4.',
        ' */',
        "export const s = 'spec §1.1 item 1 (item 2)';",
        '',
      ].join('\n');
      writeFileSync(join(root, 'src', 'x', 'a.ts'), before);
      rewriteCitations(root);
      const after = [
        '/**',
        ' * Thing (docs/reference.md §1.1 items 1–2, §2 item 3).',
        ' * Then (docs/reference.md §1.1 item 2) and (docs/reference.md items 1, 3); docs/reference.md §2.4 vector V4.',
        ' */',
        "export const s = 'spec §1.1 item 1 (item 2)';",
        '',
      ].join('\n');
      expect(readFileSync(join(root, 'src', 'x', 'a.ts'), 'utf8')).toBe(after);
      expect(checkCitations(root)).toEqual([]);
      // A second run changes nothing.
      expect(rewriteCitations(root).changed).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
