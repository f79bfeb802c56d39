// The lint rules CONTRIBUTING.md ("The layer rule") and ARCHITECTURE.md ("The
// layers, and why") promise, seen firing: eslint.config.js itself, run through
// ESLint's API over a small src/ tree written for it in a temporary directory
// (type-aware rules off: these rules read imports and names only). A rule that
// stopped firing (a renamed layer, a block that overrides another) fails here,
// not in review.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The files of the tree, each written to break one rule or to break none. */
const FILES: Record<string, string> = {
  'src/cli/x.ts': 'export const c = 1;\n',
  // An upward import: go is the bottom layer.
  'src/go/up.ts': "import { c } from '../cli/x.js';\n\nexport const g = c;\n",
  // A peer's import: hashing and net are one row.
  'src/hashing/peer.ts': "import { n } from '../net/n.js';\n\nexport const h = n;\n",
  'src/net/n.ts': 'export const n = 2;\n',
  // A downward import: allowed.
  'src/sources/down.ts': "import { n } from '../net/n.js';\n\nexport const s = n;\n",
  // A cycle inside one folder.
  'src/hcl/a.ts': "import { b } from './b.js';\n\nexport const a = (): number => b();\n",
  'src/hcl/b.ts': "import { a } from './a.js';\n\nexport const b = (): number => a();\n",
  // A cycle through a barrel that defines something.
  'src/config/index.ts': "export * from './load.js';\n\nexport const parse = (): number => 1;\n",
  'src/config/load.ts': "import { parse } from './index.js';\n\nexport const load = (): number => parse();\n",
  // The native CRC-32 addon, loaded by the one module allowed to and by another.
  'src/hashing/crc32.ts':
    "import { createRequire } from 'node:module';\n\nexport const fast: unknown = createRequire(import.meta.url)('@node-rs/crc32');\n",
  'src/installer/crc.ts':
    "import { createRequire } from 'node:module';\n\nexport const fast: unknown = createRequire(import.meta.url)('@node-rs/crc32');\n",
  // A caught value made text or an Error inline instead of through errorText / asError.
  'src/lockfile/inline.ts': [
    'export const text = (err: unknown): string => (err instanceof Error ? err.message : String(err));',
    'export const error = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));',
    '',
  ].join('\n'),
};

let dir: string;
let found: string[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'provkit-lint-rules-'));
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const eslint = new ESLint({
    cwd: dir,
    overrideConfigFile: join(ROOT, 'eslint.config.js'),
    overrideConfig: [
      {
        ...tseslint.configs.disableTypeChecked,
        files: ['**/*.ts'],
        languageOptions: { parserOptions: { projectService: false, project: null } },
      },
    ],
  });
  const results = await eslint.lintFiles(['src/**/*.ts']);
  found = results
    .flatMap((r) => r.messages.map((m) => `${relative(dir, r.filePath)}: ${m.ruleId ?? 'parse'}: ${m.message}`))
    .sort();
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const about = (file: string): string[] => found.filter((f) => f.startsWith(`${file}: `));

describe('npm run lint fails on what the layer rule forbids', () => {
  it('an import that climbs to a layer above', () => {
    expect(about('src/go/up.ts')).toEqual([
      "src/go/up.ts: no-restricted-imports: '../cli/x.js' import is restricted from being used by a pattern. layering: src/go may import only from layers below it (see eslint.config.js)",
    ]);
  });

  it('an import of a peer of the same row (hashing knows no network)', () => {
    expect(about('src/hashing/peer.ts')).toEqual([
      "src/hashing/peer.ts: no-restricted-imports: '../net/n.js' import is restricted from being used by a pattern. layering: src/hashing may import only from layers below it (see eslint.config.js)",
    ]);
  });

  it('an import cycle inside one folder, each import of it named with the cycle', () => {
    expect([...about('src/hcl/a.ts'), ...about('src/hcl/b.ts')]).toEqual([
      'src/hcl/a.ts: provkit/no-cycle: import cycle: src/hcl/a.ts → src/hcl/b.ts → src/hcl/a.ts (the layer rule: imports go one way; see CONTRIBUTING.md)',
      'src/hcl/b.ts: provkit/no-cycle: import cycle: src/hcl/b.ts → src/hcl/a.ts → src/hcl/b.ts (the layer rule: imports go one way; see CONTRIBUTING.md)',
    ]);
  });

  it('a barrel that defines what its folder imports back (a definition, and the cycle it makes)', () => {
    expect([...about('src/config/index.ts'), ...about('src/config/load.ts')]).toEqual([
      'src/config/index.ts: no-restricted-syntax: a barrel (index.ts) re-exports only: define this in a module of its own',
      'src/config/index.ts: provkit/no-cycle: import cycle: src/config/index.ts → src/config/load.ts → src/config/index.ts (the layer rule: imports go one way; see CONTRIBUTING.md)',
      'src/config/load.ts: provkit/no-cycle: import cycle: src/config/load.ts → src/config/index.ts → src/config/load.ts (the layer rule: imports go one way; see CONTRIBUTING.md)',
    ]);
  });

  it('@node-rs/crc32 loaded anywhere but src/hashing/crc32.ts', () => {
    expect(about('src/installer/crc.ts')).toEqual([
      'src/installer/crc.ts: no-restricted-syntax: only src/hashing/crc32.ts loads @node-rs/crc32 (a native addon: everything must work without it)',
    ]);
    expect(about('src/hashing/crc32.ts')).toEqual([]);
  });

  it('a caught value made text or an Error inline, not through src/errors.ts', () => {
    expect(about('src/lockfile/inline.ts')).toEqual([
      'src/lockfile/inline.ts: no-restricted-syntax: a caught value becomes an Error through asError (src/errors.ts), not inline',
      'src/lockfile/inline.ts: no-restricted-syntax: an error becomes text through errorText (src/errors.ts), not inline',
    ]);
  });

  it('and on nothing else: a downward import, and the modules imported, are clean', () => {
    expect([...about('src/sources/down.ts'), ...about('src/net/n.ts'), ...about('src/cli/x.ts')]).toEqual([]);
    expect(found).toHaveLength(10);
  });
});

describe('the documents describe the layers lint enforces', () => {
  let enforced: string[];
  beforeAll(async () => {
    // eslint.config.js is JavaScript without declarations: imported by URL, its LAYERS typed here.
    const config = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as {
      LAYERS: readonly (readonly string[])[];
    };
    enforced = config.LAYERS.map((row) => row.join(' '));
    expect(enforced.length).toBeGreaterThan(10);
  });

  it("ARCHITECTURE.md's layer table has eslint.config.js's rows, bottom first", () => {
    const text = readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8');
    const table = text.slice(text.indexOf('| layer (bottom first) |')).split('\n\n')[0]!.split('\n').slice(2);
    const rows = table.map((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]).join(' '));
    expect(rows).toEqual(enforced);
  });

  it("CONTRIBUTING.md's layer rule names them in the same order", () => {
    const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    const rule = /`src\/` is layered, bottom to top: ([^.]*)\./.exec(text)?.[1] ?? '';
    const rows = rule
      .split('→')
      .map((row) => [...row.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.split('/').join(' ')).join(' '));
    expect(rows).toEqual(enforced);
  });
});
