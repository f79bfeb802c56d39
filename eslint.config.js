// Lint configuration. Besides the usual strictness it enforces the layering of
// src/ (house style §4.2): a layer may import only from layers below it, and
// errors.ts is shared by all. Layers, bottom to top:
import importX from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const LAYERS = [
  ['fs', 'net', 'hcl'],
  ['addresses'],
  ['hashing'],
  ['lockfile'],
  ['config', 'cliconfig'],
  ['layout'],
  ['sources'],
  ['installer'],
  ['ui'],
  ['cli'],
];

const zones = [];
LAYERS.forEach((group, i) => {
  const above = LAYERS.slice(i + 1).flat();
  const peers = group;
  for (const layer of group) {
    const forbidden = [...above, ...peers.filter((p) => p !== layer && !(i === 0))];
    if (forbidden.length === 0) continue;
    zones.push({
      target: `./src/${layer}`,
      from: forbidden.map((f) => `./src/${f}`),
      message: `layering: src/${layer} may import only from layers below it (see eslint.config.js)`,
    });
  }
});
// The public index re-exports library layers but never the CLI or the UI.
zones.push({ target: './src/index.ts', from: ['./src/cli', './src/ui'], message: 'the library API never exports cli/ui' });

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'bench/.work/**', 'coverage/**', 'scratch/**', '**/*.tmp.ts'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: { projectService: { allowDefaultProject: ['*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-await-in-loop': 'error',
      '@typescript-eslint/explicit-module-boundary-types': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-restricted-paths': ['error', { zones }],
      'import-x/no-default-export': 'error',
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'node-fetch', message: 'only src/net may import node-fetch' },
            { name: 'yauzl', message: 'src/ reads zips with hashing/zip-reader.ts; yauzl is the benchmark baseline only' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/net/**'],
    rules: { 'no-restricted-imports': 'off' },
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
    rules: { 'import-x/no-default-export': 'off' },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
