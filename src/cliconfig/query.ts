/**
 * Questions consumers ask of a loaded {@link CliConfig}: the token for a
 * host, the forced service discovery of a host, and whether an installation
 * method handles a provider.
 *
 * Pure: no I/O.
 */
import type { ProviderAddress } from '../addresses/index.js';
import type { Hostname } from '../addresses/index.js';
import { displayHostnameLenient, tryHostnameForComparison } from '../addresses/index.js';
import type { CliConfig, HostConfig, PlainValue } from './model.js';
import type { ProviderSelector } from '../addresses/index.js';
import { selectorMatches } from '../addresses/index.js';

/**
 * The bearer token for `host` (any spelling: Unicode, punycode, with
 * `:port`), or `undefined`: a `TF_TOKEN_*` variable first, then a
 * `credentials` block's `token` (docs/reference.md §7 item 103: env > config blocks >
 * helper; helpers are not run by provkit).
 */
export function tokenForHost(config: CliConfig, host: string): string | undefined {
  const hn = normalizeHost(host);
  if (hn === undefined) return undefined;
  return config.envTokens.get(hn) ?? config.credentials.get(hn)?.token;
}

/** A hostname in any spelling (Unicode, punycode, upper case, `:443`) in comparison form. */
function normalizeHost(host: string): Hostname | undefined {
  const hn = tryHostnameForComparison(displayHostnameLenient(host));
  return hn.ok ? hn.hostname : undefined;
}

/**
 * The `host` block for `host`, whose `services` replace service discovery
 * for that host entirely (docs/reference.md §4.1 item 52, §7 item 102), or `undefined`.
 */
export function hostConfig(config: CliConfig, host: string): HostConfig | undefined {
  const hn = normalizeHost(host);
  return hn === undefined ? undefined : config.hosts.get(hn);
}

/** The forced service URL of `service` (e.g. `providers.v1`) for `host`, when a `host` block gives one. */
export function forcedServiceURL(config: CliConfig, host: string, service: string): PlainValue | undefined {
  const h = hostConfig(config, host);
  return h ? h.services[service] : undefined;
}

/**
 * Whether an installation method (or any include/exclude selector) handles
 * `provider`: not excluded, and included when it has include patterns
 * (`MultiSourceSelector.CanHandleProvider`).
 */
export function matches(method: ProviderSelector, provider: ProviderAddress): boolean {
  return selectorMatches(method, provider);
}
