// Lint configuration. Besides the usual strictness it enforces the layering of
// src/ (CONTRIBUTING.md, the layer rule): a layer may import only from layers
// below it (never from above, never from a peer), errors.ts is shared by all,
// no import cycle anywhere (scripts/eslint-no-cycle.mjs, which says why it is
// a rule of our own), a barrel (`index.ts`) re-exports only, and only
// src/hashing/crc32.ts loads @node-rs/crc32. test/docs/lint-rules.test.ts
// sees each of these rules fire on files written for it. ESLint's own
// no-restricted-imports does the layers (no plugin: eslint-plugin-import-x
// pulls a native resolver whose per-platform optional packages npm leaves out
// of the lock file, which breaks `npm ci`).
// Layers, bottom to top (ARCHITECTURE.md "The layers, and why"):
import globals from 'globals';
import tseslint from 'typescript-eslint';

import { provkitPlugin } from './scripts/eslint-no-cycle.mjs';

/** The layers, bottom first; a row's folders are peers (test/docs/lint-rules.test.ts holds the documents to it). */
export const LAYERS = [
  ['go'],
  ['fs', 'hcl'],
  ['addresses'],
  // Peers: hashing knows no network, the network no hashing (what both need,
  // e.g. the block size of a download and of a hash job, lives in fs/).
  ['net', 'hashing'],
  ['lockfile'],
  ['config', 'cliconfig'],
  ['layout'],
  ['sources'],
  ['installer', 'serve'],
  ['bundles', 'pull-through'],
  ['ui'],
  ['cli'],
];

/** Imports a layer may not make: every layer above it, and its peers. */
function forbiddenFor(layer, i) {
  const above = LAYERS.slice(i + 1).flat();
  const peers = LAYERS[i].filter((p) => p !== layer);
  return [...above, ...peers];
}

const NO_DEFAULT_EXPORT = { selector: 'ExportDefaultDeclaration', message: 'use named exports' };

// One error-to-text rule (CONTRIBUTING.md house style 4): a caught value becomes text through errorText
// (or systemErrorText, describeError) of src/errors.ts, never inline, so that Node's `ENOENT: …` and
// OpenSSL's text never reach output and a thrown non-Error never prints `undefined`.
const ERROR_TEXT_MESSAGE = 'an error becomes text through errorText (src/errors.ts), not inline';
const NO_INLINE_ERROR_TEXT = [
  {
    selector:
      "ConditionalExpression[test.operator='instanceof'][test.right.name='Error'][consequent.property.name='message'][alternate.callee.name='String']",
    message: ERROR_TEXT_MESSAGE,
  },
  {
    selector:
      "MemberExpression[property.name='message'][object.type='TSAsExpression'][object.typeAnnotation.typeName.name='Error']",
    message: ERROR_TEXT_MESSAGE,
  },
  {
    selector:
      "TemplateLiteral > CallExpression[callee.name='String'][arguments.0.type='Identifier'][arguments.0.name=/^(e|err|error|cause|reason)$/]",
    message: ERROR_TEXT_MESSAGE,
  },
  {
    selector:
      "NewExpression[callee.name='Error'] > CallExpression[callee.name='String'][arguments.0.type='Identifier'][arguments.0.name=/^(e|err|error|cause|reason)$/]",
    message: 'a caught value becomes an Error through asError (src/errors.ts), not inline',
  },
];

// Commands stay thin (ARCHITECTURE.md "Adding a command"): a file under src/cli/commands never builds a
// renderer (src/cli/render.ts and the run's output session, src/cli/view.ts, build them), never opens a
// hash pool, a hash store or an HTTP client (src/cli/resources.ts `RunResources` owns the run's resources
// and closes them) and never meets a signal (src/cli/interrupt.ts is the one place; commands run under
// resources.ts `runInterruptibleWith` or, a server, `serveUntilStopped`). test/docs/eslint-rules.test.ts
// checks that each of these fails lint.
const THIN_COMMAND = [
  {
    selector: 'NewExpression[callee.name=/^(JsonUI|HumanUI|ProgressDisplay|OutputSession)$/]',
    message: 'a command takes its renderer from createRenderer (src/cli/render.ts), never builds one',
  },
  {
    selector:
      'CallExpression[callee.name=/^(createHashPool|openHashStore|createNodeFetch)$/], NewExpression[callee.name=/^(HashPool|HttpClient)$/]',
    message: 'a command takes its resources from RunResources (src/cli/resources.ts), never opens its own',
  },
  {
    selector:
      "CallExpression[callee.object.name='process'][callee.property.name=/^(on|once|addListener|prependListener|prependOnceListener|off|removeListener)$/]",
    message:
      'signals are met in src/cli/interrupt.ts only: a command runs under runInterruptibleWith or serveUntilStopped (src/cli/resources.ts)',
  },
  {
    selector: 'CallExpression[callee.name=/^(stopSignal|interruptOnSignals|runInterruptible)$/]',
    message:
      'a command runs under runInterruptibleWith or serveUntilStopped (src/cli/resources.ts), which meet the signals and close the resources',
  },
];

// A command writes no file itself (CONTRIBUTING.md house styles 2 and 3): the library writes, atomically
// (src/fs/atomic.ts, src/bundles/create.ts `createBundleFile`, the runs' own commits). So a file under
// src/cli/commands imports none of node:fs's mutating functions, no fs namespace (which would reach them
// unnamed), and calls no createWriteStream; reading (readFile, stat, readRegularFile) stays allowed.
// test/docs/eslint-rules.test.ts checks that each fires.
const FS_MODULE = '/^(node:)?fs(\\u002Fpromises)?$/';
const COMMAND_WRITES_NO_FILE = [
  {
    selector: `ImportDeclaration[source.value=${FS_MODULE}] > ImportSpecifier[imported.name=/^(open|openSync|write|writeSync|writev|writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|rename|renameSync|rm|rmSync|rmdir|rmdirSync|unlink|unlinkSync|mkdir|mkdirSync|mkdtemp|mkdtempSync|copyFile|copyFileSync|cp|cpSync|symlink|symlinkSync|link|linkSync|truncate|truncateSync|chmod|chmodSync|chown|chownSync|utimes|utimesSync)$/]`,
    message: 'a command writes no file itself: the library writes it, atomically (src/fs/atomic.ts, house style 3)',
  },
  {
    selector: `ImportDeclaration[source.value=${FS_MODULE}] > :matches(ImportNamespaceSpecifier, ImportDefaultSpecifier), ImportExpression[source.value=${FS_MODULE}]`,
    message: 'a command imports what it reads from node:fs by name (it writes no file itself: house style 3)',
  },
  {
    selector: "CallExpression[callee.property.name='createWriteStream']",
    message: 'a command writes no file itself: the library writes it, atomically (src/fs/atomic.ts, house style 3)',
  },
];

// A native addon: everything must work without it (src/hashing/crc32.ts falls back to Node's zlib.crc32), so one
// module loads it, at its first large chunk. It is required, not imported, so the rule looks at the name itself.
const ONLY_CRC32_LOADS_NATIVE = {
  selector: "Literal[value='@node-rs/crc32']",
  message: 'only src/hashing/crc32.ts loads @node-rs/crc32 (a native addon: everything must work without it)',
};

// What every module of src/ is held to (no-restricted-syntax is one rule: a block that adds selectors repeats these).
const SRC_SYNTAX = [NO_DEFAULT_EXPORT, ...NO_INLINE_ERROR_TEXT, ONLY_CRC32_LOADS_NATIVE];

const LIBRARY_PATHS = [
  { name: 'node-fetch', message: 'only src/net may import node-fetch' },
  { name: 'yauzl', message: 'src/ reads zips with hashing/zip-reader.ts; yauzl is the benchmark baseline only' },
];

// One block per layer: relative imports that climb into a forbidden layer are
// refused (`../cli/x.js`, `../../ui/y.js`, …).
const layerBlocks = LAYERS.flatMap((group, i) =>
  group.map((layer) => {
    const forbidden = forbiddenFor(layer, i);
    const patterns =
      forbidden.length === 0
        ? []
        : [
            {
              regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`,
              message: `layering: src/${layer} may import only from layers below it (see eslint.config.js)`,
            },
          ];
    return {
      files: [`src/${layer}/**/*.ts`],
      rules: {
        'no-restricted-imports': ['error', { paths: layer === 'net' ? [] : LIBRARY_PATHS, patterns }],
      },
    };
  }),
);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.scratch/**',
      'bench/.work/**',
      'coverage/**',
      'scratch/**',
      '**/*.tmp.ts',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'bench/*.mjs'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-await-in-loop': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      // Every case of a union handled, or a default saying why not (style: exhaustive switches over events and kinds).
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true, requireDefaultForNonUnion: false },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', NO_DEFAULT_EXPORT],
      'no-restricted-imports': ['error', { paths: LIBRARY_PATHS }],
    },
  },
  ...layerBlocks,
  {
    files: ['src/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...SRC_SYNTAX] },
  },
  {
    files: ['src/errors.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_DEFAULT_EXPORT, ONLY_CRC32_LOADS_NATIVE] },
  },
  {
    files: ['src/hashing/crc32.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_DEFAULT_EXPORT, ...NO_INLINE_ERROR_TEXT] },
  },
  {
    files: ['src/cli/commands/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...SRC_SYNTAX, ...THIN_COMMAND, ...COMMAND_WRITES_NO_FILE],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { provkit: provkitPlugin },
    rules: { 'provkit/no-cycle': 'error' },
  },
  {
    // A barrel re-exports only: a definition there is imported through the barrel by its own folder's files (a cycle).
    files: ['src/**/index.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...SRC_SYNTAX,
        {
          selector: 'Program > :not(ImportDeclaration, ExportAllDeclaration, ExportNamedDeclaration[declaration=null])',
          message: 'a barrel (index.ts) re-exports only: define this in a module of its own',
        },
      ],
    },
  },
  {
    // The public index re-exports library layers but never the CLI or the UI.
    files: ['src/index.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: LIBRARY_PATHS,
          patterns: [{ regex: '^\\./(cli|ui)/', message: 'the library API never exports cli/ui' }],
        },
      ],
    },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**', 'mirror-fixtures/**'],
    rules: {
      'no-restricted-imports': 'off',
      // Scripts and tests run steps in order on purpose.
      'no-await-in-loop': 'off',
      '@typescript-eslint/explicit-module-boundary-types': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
    },
  },
  {
    files: ['*.config.ts', '*.config.js', 'test/support/totals-reporter.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['**/*.js', 'bench/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // bin/ is CommonJS (bin/package.json; bin/load-cli.js says why).
    // bench/tiny-floor.cjs is CommonJS for the same reason.
    files: ['bin/**/*.js', 'bench/*.cjs'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
