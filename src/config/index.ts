/**
 * `src/config`: the provider requirements of a root module and its module
 * tree, read from `.tf` / `.tf.json` files (and `.tofu` / `.tofu.json` for
 * OpenTofu) exactly as the reference loads them, with the reference's
 * diagnostics (file, line and column; Summary and Detail).
 *
 * Entry points:
 * - {@link loadModuleRequirements} / {@link loadConfig}: a directory on disk,
 *   module calls resolved through `.terraform/modules/modules.json`, and
 *   optionally (as `init`) the modules that test files' `run` blocks call;
 * - pure functions for tests and tools: {@link parseConfigFile} (one file),
 *   {@link buildModule} (files → module, override rules),
 *   {@link moduleRequirements} (module → requirements),
 *   {@link configFileNames} (directory listing → files),
 *   {@link parseModuleManifest}.
 *
 * Also: {@link discoverRoots} (the root modules of a directory tree, for
 * `lock -recursive`) and the platform policy file `provkit.hcl`
 * ({@link parsePolicyFile}, {@link findPolicy}).
 *
 * What it does not do: install modules, evaluate variables or functions,
 * validate resource arguments or expressions beyond what provider
 * requirements need, print anything. Every problem is a diagnostic, never an
 * exception.
 */
export { BAD_IDENTIFIER_DETAIL, decodeConfigFile, isJSONConfigFilename, parseConfigFile } from './file.js';
export type { DecodeOptions, FileResult } from './file.js';
export { buildModule, impliedProviderLocalName, providerForLocalName } from './module.js';
export type { ModuleResult } from './module.js';
export {
  mergeRequirements,
  moduleRequirements,
  requirementsOf,
  sortRequirements,
  lockableRequirements,
  testFileRequirements,
} from './requirements.js';
export type { ProviderRequirement, Requirements } from './requirements.js';
export { configFileExt, configFileNames, isIgnoredFile, isOverrideFile } from './files.js';
export type { DirEntry, ModuleFileNames } from './files.js';
export { parseModuleManifest } from './manifest.js';
export type { ManifestRecord, ManifestResult } from './manifest.js';
export { loadConfig, loadModuleRequirements, nodeConfigFs } from './load.js';
export { DEFAULT_TEST_DIRECTORY, parseTestFile, testFileNames, testModulePath } from './test-file.js';
export type { TestFileDecl, TestRunDecl } from './test-file.js';
export type { ConfigFs, LoadedConfig, LoadOptions, ModuleNode, RequirementsResult } from './load.js';
export { parseJSON } from '../hcl/index.js';
export type { JsonParseResult, JsonValue } from '../hcl/index.js';
export { jsonBody, nativeBody } from './body.js';
export type { BodyView } from './body.js';
export { isGoVersionConstraint } from './goversion.js';
export { isLocalModuleSource, parseModuleSource } from './module-source.js';
export type { ModuleSource, ModuleSourceError } from './module-source.js';
export { diagnosticLocation, hasErrors } from './diagnostics.js';
export { discoverRoots, isWalkedDirectory } from './roots.js';
export type { DiscoveredTree, DiscoverOptions } from './roots.js';
export { findPolicy, loadPolicyFile, parsePolicyFile, POLICY_FILE_NAME } from './policy.js';
export type { PlatformPolicy, PolicyResult } from './policy.js';
export {
  auditRuleFor,
  DEFAULT_ACCEPT,
  DEFAULT_ACCEPT_MIRROR_ONLY,
  judgeHash,
  keyIdOf,
  parseAuditBlock,
} from './audit-policy.js';
export type {
  AuditPolicy,
  AuditProviderRule,
  AuditRule,
  AuditViolation,
  AuditViolationCode,
  EffectiveAuditRule,
  HashJudgement,
  JudgeContext,
} from './audit-policy.js';
export type { Diagnostic, Range } from './diagnostics.js';
export type {
  ConfigFile,
  DeclaredConstraint,
  ImportDecl,
  Module,
  ModuleCallDecl,
  NamedDecl,
  ProviderConfigDecl,
  ProviderRef,
  RequiredProviderEntry,
  RequiredProvidersBlock,
  ResourceDecl,
} from './model.js';
