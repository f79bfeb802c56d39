/**
 * Host credentials from the environment: `TF_TOKEN_<name>` variables
 * (`cliconfig/credentials.go` `collectCredentialsFromEnv`; docs/reference.md §7 item 103).
 *
 * Decoding a variable name: strip `TF_TOKEN_`, replace `__` by `-`, then `_`
 * by `.`, then take svchost's lenient display form and then its comparison
 * form. So both the punycode (`TF_TOKEN_xn____caf__dma_fr`) and the Unicode
 * (`TF_TOKEN_café_fr`) spellings reach `xn--caf-dma.fr`, and names that are
 * not hostnames are ignored. A port cannot be written this way
 * (`TF_TOKEN_localhost_28443` is the hostname `localhost.28443`); only a
 * literal `TF_TOKEN_localhost:28443` works (confirmed with terraform).
 *
 * Pure: the environment is an argument.
 */
import type { Hostname } from '../addresses/index.js';
import { displayHostnameLenient, hostnameForComparison, tryHostnameForComparison } from '../addresses/index.js';

/** The prefix of credential variables. */
export const TOKEN_ENV_PREFIX = 'TF_TOKEN_';

/** The hostname (comparison form) a `TF_TOKEN_…` variable name stands for, or `undefined`. */
export function hostnameFromTokenEnvName(name: string): Hostname | undefined {
  if (!name.startsWith(TOKEN_ENV_PREFIX)) return undefined;
  const raw = name.slice(TOKEN_ENV_PREFIX.length).replaceAll('__', '-').replaceAll('_', '.');
  const r = tryHostnameForComparison(displayHostnameLenient(raw));
  return r.ok ? r.hostname : undefined;
}

/**
 * The conventional variable name for a host's token: `TF_TOKEN_` and the
 * comparison form (punycode) with `-` written `__` and `.` written `_`
 * (`app.terraform.io` → `TF_TOKEN_app_terraform_io`, `café.fr` →
 * `TF_TOKEN_xn____caf__dma_fr`). A port is kept as `:port`, the only form
 * the reference can read back.
 *
 * @throws {ProvkitError} `INVALID_PROVIDER_SOURCE` when `host` is not a valid hostname.
 */
export function tokenEnvVarName(host: string): string {
  const hn = hostnameForComparison(host);
  const colon = hn.indexOf(':');
  const name = colon === -1 ? hn : hn.slice(0, colon);
  const port = colon === -1 ? '' : hn.slice(colon);
  return TOKEN_ENV_PREFIX + name.replaceAll('-', '__').replaceAll('.', '_') + port;
}

/**
 * Every token the environment sets, by hostname (comparison form). When two
 * variables name the same host, the later one in `env`'s key order wins (the
 * reference's order is that of `os.Environ`).
 */
export function tokensFromEnv(env: Readonly<Record<string, string | undefined>>): Map<Hostname, string> {
  const out = new Map<Hostname, string>();
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const host = hostnameFromTokenEnvName(name);
    if (host !== undefined) out.set(host, value);
  }
  return out;
}
