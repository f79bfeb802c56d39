/**
 * `src/cliconfig`: the CLI configuration of the reference tools
 * (`.tofurc` / `.terraformrc`, `*.tfrc`, `TF_CLI_CONFIG_FILE`, `TF_TOKEN_*`,
 * `TF_PLUGIN_CACHE_DIR`): where it is, how its files merge, and what it says
 * about provider installation (`provider_installation` methods with
 * include/exclude patterns, `dev_overrides`, the implied local mirrors),
 * service discovery (`host`), credentials and the plugin cache.
 *
 * Entry points: {@link loadCliConfig} (with {@link processCliConfigContext}
 * for the running process), {@link parseCliConfigFile} for one file, the
 * pattern functions ({@link parseProviderPattern}, {@link matches}) and the
 * queries ({@link tokenForHost}, {@link hostConfig}).
 *
 * What it does not do: run credentials helpers, scan mirrors, contact hosts,
 * print. The environment, home directory, platform and working directory are
 * always injected.
 */
export type {
  CliConfig,
  CliConfigDiagnostic,
  CredentialsConfig,
  CredentialsHelperConfig,
  DevOverride,
  DirectMethod,
  FilesystemMirrorMethod,
  HostConfig,
  InstallationMethod,
  NetworkMirrorMethod,
  OciCredentialsBlock,
  OciDefaultCredentials,
  OciMirrorMethod,
  PlainValue,
  ProviderInstallation,
} from './model.js';
export { expandEnv, loadCliConfig, nodeCliConfigFs, processCliConfigContext } from './load.js';
export type { CliConfigFs } from './load.js';
export { looksLikeJSON, parseCliConfigFile } from './parse.js';
export type { CliConfigFile, CliConfigFileResult, RawMethod, RawProviderInstallation } from './parse.js';
export {
  anyPatternMatches,
  parseProviderPattern,
  parseProviderPatterns,
  patternMatches,
  selectorMatches,
  WILDCARD,
} from '../addresses/index.js';
export type { PatternSegments, ProviderPattern, ProviderSelector } from '../addresses/index.js';
export { hostnameFromTokenEnvName, TOKEN_ENV_PREFIX, tokenEnvVarName, tokensFromEnv } from './credentials.js';
export {
  cliConfigFileOverride,
  configDirectory,
  homeDirectory,
  hostOSFromNode,
  impliedMirrorCandidates,
  mainConfigFile,
  pluginDirectory,
  userDataPluginDirs,
} from './locations.js';
export type { CliConfigContext, Exists, HostOS, MainConfigFile } from './locations.js';
export { forcedServiceURL, hostConfig, matches, tokenForHost } from './query.js';
export { prepareRepositoryMapping } from './oci-template.js';
export type { RepositoryMapping } from './oci-template.js';
export {
  dockerConfigSearchLocations,
  ociCredentialsLookup,
  prefixSpecificity,
  runDockerCredentialHelper,
} from './oci-credentials.js';
export type { HelperResult, OciCredentialsEnv } from './oci-credentials.js';
