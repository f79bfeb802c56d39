// The lint rule that keeps commands thin (eslint.config.js THIN_COMMAND; ARCHITECTURE.md "Adding a
// command"): a file under src/cli/commands never builds a renderer, never opens a hash pool, a hash
// store or an HTTP client, never meets a signal, and writes no file itself (node:fs's mutating functions,
// a namespace import of node:fs, createWriteStream); src/cli/render.ts, resources.ts and interrupt.ts do
// the first three, the library (src/fs/atomic.ts, src/bundles/create.ts) the last. This asks ESLint for the configuration it applies to a command's path and runs that
// no-restricted-syntax rule over snippets, so a selector that matches nothing fails here, not silently.
import { fileURLToPath } from 'node:url';

import { ESLint, Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const COMMAND = 'src/cli/commands/example.ts';

type RuleEntry = Linter.RuleEntry;
let rules: Map<string, RuleEntry | undefined>;

/** The messages of the configured no-restricted-syntax rule for `path` over `code`. */
function restricted(code: string, path: string): string[] {
  const linter = new Linter({ configType: 'flat', cwd: ROOT });
  const rule = rules.get(path);
  const messages = linter.verify(
    code,
    [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser, sourceType: 'module' },
        rules: rule === undefined ? {} : { 'no-restricted-syntax': rule },
      },
    ],
    { filename: `${ROOT}${path}` },
  );
  return messages.map((m) => m.message);
}

beforeAll(async () => {
  const eslint = new ESLint({ cwd: ROOT });
  rules = new Map();
  for (const path of [COMMAND, 'src/cli/resources.ts', 'src/cli/interrupt.ts']) {
    const config = (await eslint.calculateConfigForFile(path)) as { rules?: Record<string, RuleEntry> };
    rules.set(path, config.rules?.['no-restricted-syntax']);
  }
}, 60_000);

const VIOLATIONS: ReadonlyArray<readonly [string, string, RegExp]> = [
  ['builds a JSON renderer', `new JsonUI(io.stdout);`, /takes its renderer from createRenderer/],
  ['builds a human renderer', `new ProgressDisplay({});`, /takes its renderer from createRenderer/],
  ['opens a hash pool', `const pool = createHashPool({});`, /takes its resources from RunResources/],
  ['opens a hash store', `openHashStore(dir);`, /takes its resources from RunResources/],
  ['opens an HTTP client', `new HttpClient({ fetch });`, /takes its resources from RunResources/],
  ['listens for a signal', `process.on('SIGINT', () => undefined);`, /signals are met in src\/cli\/interrupt\.ts/],
  ['stops listening for a signal', `process.off('SIGTERM', stop);`, /signals are met in src\/cli\/interrupt\.ts/],
  ['waits for a server stop itself', `await stopSignal();`, /runs under runInterruptibleWith or serveUntilStopped/],
  [
    'meets an interrupt itself',
    `await runInterruptible(io, 'x', async () => 0);`,
    /runs under runInterruptibleWith or serveUntilStopped/,
  ],
  ['renames a file', `import { rename } from 'node:fs/promises';`, /a command writes no file itself/],
  ['opens a file (for writing)', `import { open } from 'fs/promises';`, /a command writes no file itself/],
  ['writes a file synchronously', `import { writeFileSync } from 'node:fs';`, /a command writes no file itself/],
  ['removes a file', `import { rm as remove } from 'node:fs/promises';`, /a command writes no file itself/],
  ['takes node:fs as a namespace', `import * as fs from 'node:fs';`, /imports what it reads from node:fs by name/],
  ['imports node:fs at run time', `await import('node:fs/promises');`, /imports what it reads from node:fs by name/],
  ['streams into a file', `handle.createWriteStream();`, /a command writes no file itself/],
];

describe('lint keeps commands thin', () => {
  it.each(VIOLATIONS)('a command that %s fails lint', (_what, code, message) => {
    const found = restricted(code, COMMAND);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });

  it('a command that takes its renderer, resources and signals from the shared code passes', () => {
    const code = [
      `const ui = createRenderer(io, globals, json);`,
      `return runInterruptibleWith(io, globals, 'provkit x', async (r) => { r.pool(); r.http(); return 0; });`,
      `return serveUntilStopped(io, globals, async (r) => start(r.pool()), end);`,
      `import { readFile, stat } from 'node:fs/promises';`,
      `import { createReadStream } from 'node:fs';`,
      `import { writeFileAtomic } from '../../fs/atomic.js';`,
      `import { rename } from '../../somewhere/else.js';`,
    ].join('\n');
    expect(restricted(code, COMMAND)).toEqual([]);
  });

  it('the shared code itself may: the rule is for src/cli/commands only', () => {
    expect(restricted(`const pool = createHashPool({}); await stopSignal();`, 'src/cli/resources.ts')).toEqual([]);
    expect(restricted(`process.on('SIGINT', () => undefined);`, 'src/cli/interrupt.ts')).toEqual([]);
  });
});
