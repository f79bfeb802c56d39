/**
 * Bearer tokens per host (docs/reference.md §7 item 103), as injected lookups.
 *
 * Which requests get a host's token is decided by the sources, as the
 * reference does (docs/reference.md §8.2 item 112): service discovery and the registry API
 * of the provider's host, and a network mirror's JSON documents — never
 * package archives, SHA256SUMS or signatures. The HTTP client then sends a
 * token only to the host it was bound to, so a redirect elsewhere drops it.
 */
import { displayHostnameLenient, tryHostnameForComparison, type Hostname } from '../addresses/index.js';

/** The token for a host (comparison form), or undefined. */
export type CredentialsLookup = (host: Hostname) => string | undefined;

const PREFIX = 'TF_TOKEN_';

/**
 * Tokens from `TF_TOKEN_<host>` variables, decoded as the reference does
 * (`cliconfig/credentials.go`): `__` → `-`, then `_` → `.`, then the lenient
 * display form, then the comparison form, so both Unicode and punycode names
 * work (`TF_TOKEN_xn____caf__dma_example` and `TF_TOKEN_café_example`). A port
 * cannot be written with underscores (docs/reference.md §7 item 103: only a literal
 * `TF_TOKEN_localhost:28443` works). Empty values and undecodable names are
 * ignored.
 */
export function credentialsFromEnv(env: Readonly<Record<string, string | undefined>>): CredentialsLookup {
  const tokens = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(PREFIX) || value === undefined || value === '') continue;
    const raw = name.slice(PREFIX.length).replaceAll('__', '-').replaceAll('_', '.');
    const host = tryHostnameForComparison(displayHostnameLenient(raw));
    if (host.ok) tokens.set(host.hostname, value);
  }
  return (host) => tokens.get(host);
}

/**
 * Tokens from a `credentials "HOST" { token = "…" }`-style map; keys are
 * written hostnames (Unicode, optional port), invalid ones ignored.
 */
export function staticCredentials(byHost: Readonly<Record<string, string>>): CredentialsLookup {
  const tokens = new Map<string, string>();
  for (const [given, token] of Object.entries(byHost)) {
    const host = tryHostnameForComparison(given);
    if (host.ok) tokens.set(host.hostname, token);
  }
  return (host) => tokens.get(host);
}

/** The first lookup that has a token wins (env before config blocks before helpers, docs/reference.md §7 item 103). */
export function chainCredentials(...lookups: readonly CredentialsLookup[]): CredentialsLookup {
  return (host) => {
    for (const l of lookups) {
      const t = l(host);
      if (t !== undefined) return t;
    }
    return undefined;
  };
}
