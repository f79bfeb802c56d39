/**
 * Builds the concrete sources from settings: the one place that names them
 * (house style: a single factory maps configuration to sources).
 */
import type { HttpClient } from '../net/index.js';
import { credentialsFromEnv, MemoizeSource, RegistrySource, ServiceDiscovery, signaturePolicy, type Source } from '../sources/index.js';
import type { CliIO, GlobalOptions } from './io.js';

/**
 * The origin-registry source (provider registry protocol v1), memoised so a
 * run asks each question once. Credentials come from `TF_TOKEN_<host>`
 * variables; the signature policy from the flavor and its environment
 * switches (`OPENTOFU_ENFORCE_GPG_VALIDATION`, `OPENTOFU_ENFORCE_GPG_EXPIRATION`).
 */
export function registrySourceFor(io: CliIO, globals: GlobalOptions, http: HttpClient): Source {
  const credentials = credentialsFromEnv(io.env);
  const discovery = new ServiceDiscovery({ http, credentials });
  return new MemoizeSource(
    new RegistrySource({ http, discovery, flavor: globals.flavor, credentials, signaturePolicy: signaturePolicy(globals.flavor, io.env) }),
  );
}
