/**
 * Test files (`*.tftest.hcl`, `*.tftest.json`; for OpenTofu also
 * `*.tofutest.hcl`, `*.tofutest.json`), read as `init` reads them to find
 * what they need installed (`internal/configs/test_file.go`,
 * `parser_config_dir.go` `dirFiles`, `config_build.go` `buildTestModules`,
 * in both hashicorp/terraform v1.11 and opentofu/opentofu v1.12):
 *
 * - a `run` block's `module { source = "…" version = "…" }` names a module
 *   that `init` installs (with the key `test.<dir parts>.<file base>.<run>`,
 *   {@link testModulePath}) and whose providers it installs and locks;
 * - OpenTofu also requires the providers of a test file's `provider` blocks
 *   (resolved through the root module's local names); Terraform does not
 *   (confirmed with terraform 1.11.4: a test-file `provider "tools" {}`
 *   installs nothing).
 *
 * Checked as in the reference, with its diagnostics: the file, `run` and
 * `module` block schemas, run names, the module block's `source` and
 * `version`, duplicate run names and `provider` blocks (Terraform), and
 * `provider` blocks. Not validated: the content of `variables`, `assert`,
 * `plan_options`, `mock_provider` and `override_*` blocks and of run
 * attributes (`command`, `providers`, `expect_failures`, `state_key`).
 *
 * Pure: no I/O, never throws.
 */
import type { Diagnostic } from '../errors.js';
import { posix } from 'node:path';

import type { Flavor } from '../addresses/index.js';
import { compareBytewise, flavorInfo, goQuote } from '../addresses/index.js';
import type { Range } from '../hcl/index.js';
import { isValidIdentifier, parseHCL, parseJSONFile, staticString } from '../hcl/index.js';
import type { BlockView, BodySchema, BodyView } from './body.js';
import { jsonBody, nativeBody } from './body.js';
import { errorDiag, formatRange, hasErrors } from './diagnostics.js';
import { BAD_IDENTIFIER_DETAIL, decodeTestProviderBlock, decodeVersionConstraint } from './file.js';
import type { DirEntry } from './files.js';
import { isIgnoredFile } from './files.js';
import type { ModuleCallDecl, ProviderConfigDecl } from './model.js';
import { isModuleSourceError, parseModuleSource } from './module-source.js';

/** One `run` block that decoded without errors. */
export interface TestRunDecl {
  readonly name: string;
  /** Its `module` block, when it has one without errors: a module call named after the run. */
  readonly module?: ModuleCallDecl;
  readonly declRange: Range;
}

/** What the loader keeps of a test file. */
export interface TestFileDecl {
  /** The file name as given (root-relative, e.g. `tests/main.tftest.hcl`). */
  readonly filename: string;
  readonly runs: readonly TestRunDecl[];
  /** Its `provider` blocks (OpenTofu requires their providers). */
  readonly providerConfigs: readonly ProviderConfigDecl[];
}

/** The default test directory of `init -test-directory` (`configs.DefaultTestDirectory`). */
export const DEFAULT_TEST_DIRECTORY = 'tests';

const TF_TEST_EXTS = ['.tftest.hcl', '.tftest.json'] as const;
const TOFU_TEST_EXTS = ['.tofutest.hcl', '.tofutest.json'] as const;

/**
 * The test files of a directory listing, in name order: for Terraform the
 * `.tftest.*` files; for OpenTofu also `.tofutest.*`, and a `x.tofutest.hcl`
 * hides `x.tftest.hcl` (`filterTfPathsWithTofuAlternatives`; likewise
 * `.json`). Directories and editor files are skipped.
 */
export function testFileNames(entries: readonly DirEntry[], flavor: Flavor): string[] {
  const exts: readonly string[] = flavor === 'tofu' ? [...TF_TEST_EXTS, ...TOFU_TEST_EXTS] : TF_TEST_EXTS;
  const names = entries
    .filter((e) => !e.isDirectory && !isIgnoredFile(e.name) && exts.some((x) => e.name.endsWith(x)))
    .map((e) => e.name)
    .sort(compareBytewise);
  if (flavor !== 'tofu') return names;
  const set = new Set(names);
  return names.filter((n) => {
    if (n.endsWith('.tftest.hcl')) return !set.has(`${n.slice(0, -'.tftest.hcl'.length)}.tofutest.hcl`);
    if (n.endsWith('.tftest.json')) return !set.has(`${n.slice(0, -'.tftest.json'.length)}.tofutest.json`);
    return true;
  });
}

/**
 * The module path of a run's module (`buildTestModules`): `test`, the
 * directories of the test file's root-relative name, its base name without
 * `.tftest.hcl` (only that suffix is removed, so `tests/j.tftest.json` gives
 * `test.tests.j.tftest.json.<run>`, confirmed with terraform 1.11.4), and
 * the run's name. Joined with `.`, it is the module manifest key.
 */
export function testModulePath(filename: string, runName: string): string[] {
  const dir = posix.dirname(filename);
  const base = posix.basename(filename);
  const name = base.endsWith('.tftest.hcl') ? base.slice(0, -'.tftest.hcl'.length) : base;
  return ['test', ...(dir === '.' ? [] : dir.split('/')), name, runName];
}

const TEST_FILE_SCHEMA: BodySchema = {
  attributes: [],
  blocks: [
    { type: 'run', labels: ['name'] },
    { type: 'provider', labels: ['name'] },
    { type: 'mock_provider', labels: ['name'] },
    { type: 'variables', labels: [] },
    { type: 'override_resource', labels: [] },
    { type: 'override_data', labels: [] },
    { type: 'override_module', labels: [] },
  ],
};

/** `testRunBlockSchema`: Terraform 1.11 also has `state_key`. */
function runBlockSchema(flavor: Flavor): BodySchema {
  const attributes = [{ name: 'command' }, { name: 'providers' }, { name: 'expect_failures' }];
  if (flavor === 'terraform') attributes.push({ name: 'state_key' });
  return {
    attributes,
    blocks: [
      'plan_options',
      'assert',
      'variables',
      'module',
      'override_resource',
      'override_data',
      'override_module',
    ].map((type) => ({ type, labels: [] })),
  };
}

const MODULE_BLOCK_SCHEMA: BodySchema = { attributes: [{ name: 'source' }, { name: 'version' }], blocks: [] };

/**
 * Parses and decodes one test file: the JSON syntax when the name ends in
 * `.json`, the native syntax otherwise. See the module comment.
 */
export function parseTestFile(
  source: Uint8Array | string,
  filename: string,
  flavor: Flavor,
): { file: TestFileDecl; diagnostics: Diagnostic[] } {
  if (filename.endsWith('.json')) {
    const parsed = parseJSONFile(source, filename);
    if (!parsed.value) return { file: { filename, runs: [], providerConfigs: [] }, diagnostics: parsed.diagnostics };
    const r = decodeTestFile(jsonBody(parsed.value), filename, flavor);
    return { file: r.file, diagnostics: [...parsed.diagnostics, ...r.diagnostics] };
  }
  const parsed = parseHCL(source, filename);
  const r = decodeTestFile(nativeBody(parsed.body), filename, flavor);
  return { file: r.file, diagnostics: [...parsed.diagnostics, ...r.diagnostics] };
}

/** `loadTestFile`. */
function decodeTestFile(
  body: BodyView,
  filename: string,
  flavor: Flavor,
): { file: TestFileDecl; diagnostics: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const content = body.content(TEST_FILE_SCHEMA);
  diags.push(...content.diagnostics);
  const runs: TestRunDecl[] = [];
  const providerConfigs: ProviderConfigDecl[] = [];
  const runNames = new Map<string, Range>();
  const providerNames = new Map<string, Range>();
  let variables: Range | undefined;
  for (const block of content.blocks) {
    switch (block.type) {
      case 'run': {
        const r = decodeRunBlock(block, flavor);
        diags.push(...r.diagnostics);
        if (!hasErrors(r.diagnostics)) runs.push(r.run);
        // Terraform only; OpenTofu 1.12 accepts two runs of the same name.
        if (flavor === 'terraform') {
          const prior = runNames.get(r.run.name);
          if (prior) {
            diags.push(
              errorDiag(
                'Duplicate "run" block names',
                `This test file already has a run named ${r.run.name} block defined at ${formatRange(prior)}.`,
                block.defRange,
              ),
            );
            break;
          }
          runNames.set(r.run.name, r.run.declRange);
        }
        break;
      }
      case 'variables': {
        if (variables) {
          diags.push(
            errorDiag(
              'Multiple "variables" blocks',
              `This test file already has a variables block defined at ${formatRange(variables)}.`,
              block.defRange,
            ),
          );
          break;
        }
        variables = block.defRange;
        diags.push(...block.body.justAttributes().diagnostics);
        break;
      }
      case 'provider': {
        const p = decodeTestProviderBlock(block, flavor);
        diags.push(...p.diagnostics);
        if (!p.provider) break;
        const key = p.provider.alias === undefined ? p.provider.name : `${p.provider.name}.${p.provider.alias}`;
        const previous = providerNames.get(key);
        // Terraform refuses a second block for the same configuration (`mock_provider` blocks,
        // which share these keys, are not decoded here); OpenTofu keeps the last one.
        if (previous && flavor === 'terraform') {
          diags.push(
            errorDiag(
              'Duplicate provider block',
              `A provider for ${key} is already defined at ${formatRange(previous)}.`,
              p.provider.declRange,
            ),
          );
          break;
        }
        providerNames.set(key, block.labelRanges[0] ?? block.defRange);
        providerConfigs.push(p.provider);
        break;
      }
      default:
        break;
    }
  }
  return { file: { filename, runs, providerConfigs }, diagnostics: diags };
}

/** `decodeTestRunBlock`, reduced to what {@link TestRunDecl} holds. */
function decodeRunBlock(block: BlockView, flavor: Flavor): { run: TestRunDecl; diagnostics: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const content = block.body.content(runBlockSchema(flavor));
  diags.push(...content.diagnostics);
  const name = block.labels[0] ?? '';
  if (!isValidIdentifier(name))
    diags.push(errorDiag('Invalid run block name', BAD_IDENTIFIER_DETAIL, block.labelRanges[0] ?? block.defRange));
  let module: ModuleCallDecl | undefined;
  let variables: Range | undefined;
  for (const inner of content.blocks) {
    if (inner.type === 'module') {
      if (module) {
        diags.push(
          errorDiag(
            'Multiple "module" blocks',
            `This run block already has a module block defined at ${formatRange(module.declRange)}.`,
            inner.defRange,
          ),
        );
      }
      const m = decodeRunModuleBlock(inner, name, flavor);
      diags.push(...m.diagnostics);
      if (!hasErrors(m.diagnostics)) module = m.module;
    } else if (inner.type === 'variables') {
      if (variables) {
        diags.push(
          errorDiag(
            'Multiple "variables" blocks',
            `This run block already has a variables block defined at ${formatRange(variables)}.`,
            inner.defRange,
          ),
        );
        continue;
      }
      variables = inner.defRange;
      diags.push(...inner.body.justAttributes().diagnostics);
    }
  }
  return { run: { name, ...(module ? { module } : {}), declRange: block.defRange }, diagnostics: diags };
}

/**
 * `decodeTestRunModuleBlock`: a module call named after the run. Its source
 * range is the whole `source = "…"` attribute (`SourceDeclRange`), which is
 * where "Module source has changed" points for these calls.
 */
function decodeRunModuleBlock(
  block: BlockView,
  runName: string,
  flavor: Flavor,
): { module: ModuleCallDecl; diagnostics: Diagnostic[] } {
  const diags: Diagnostic[] = [];
  const product = flavorInfo(flavor).productName;
  const content = block.body.content(MODULE_BLOCK_SCHEMA);
  diags.push(...content.diagnostics);
  const versionAttr = content.attributes.get('version');
  const version = versionAttr ? decodeVersionConstraint(versionAttr, flavor) : undefined;
  if (version) diags.push(...version.diagnostics);
  const sourceAttr = content.attributes.get('source');
  const base = {
    name: runName,
    declRange: block.defRange,
    providers: [],
    ...(version?.version ? { version: version.version } : {}),
  };
  if (!sourceAttr) {
    diags.push(
      errorDiag(
        'Missing "source" attribute for module block',
        'You must specify a source attribute when executing alternate modules during test executions.',
        block.defRange,
      ),
    );
    return { module: { ...base, sourceSet: false }, diagnostics: diags };
  }
  const sourceRange = sourceAttr.range;
  const raw = staticString(sourceAttr.expr);
  diags.push(...raw.diagnostics);
  if (raw.value === undefined) return { module: { ...base, sourceSet: true, sourceRange }, diagnostics: diags };
  const parsed = parseModuleSource(raw.value, flavor, versionAttr !== undefined);
  if (isModuleSourceError(parsed)) {
    diags.push(
      parsed.reason === 'maybeRelative'
        ? errorDiag(
            'Invalid module source address',
            `${product} failed to determine your intended installation method for remote module package ${goQuote(parsed.message)}.\n\nIf you intended this as a path relative to the current module, use "./${parsed.message}" instead. The "./" prefix indicates that the address is a relative filesystem path.`,
            sourceRange,
          )
        : errorDiag(
            'Invalid registry module source address',
            `Failed to parse module registry address: ${parsed.message}.\n\n${product} assumed that you intended a module registry source address because you also set the argument "version", which applies only to registry modules.`,
            sourceRange,
          ),
    );
    return { module: { ...base, sourceSet: true, sourceRaw: raw.value, sourceRange }, diagnostics: diags };
  }
  // Terraform runs only local and registry modules from test files (confirmed with terraform 1.11.4); OpenTofu 1.12 has no such check.
  if (parsed.kind === 'remote' && flavor === 'terraform') {
    diags.push(
      errorDiag(
        'Invalid module source address',
        'Only local or registry module sources are currently supported from within test run blocks.',
        sourceRange,
      ),
    );
  }
  return {
    module: { ...base, source: parsed, sourceRaw: raw.value, sourceSet: true, sourceRange },
    diagnostics: diags,
  };
}
