/**
 * Authentication to OCI registries: what a `401` asks for and how to answer
 * it, as ORAS-Go's `auth.Client` does (oras-project/oras-go
 * registry/remote/auth/client.go, challenge.go), which OpenTofu uses
 * (opentofu/opentofu internal/oci/oci_distribution.go):
 *
 * - `WWW-Authenticate: Basic …`: the repository's username and password, as
 *   `Authorization: Basic`.
 * - `WWW-Authenticate: Bearer realm=…,service=…,scope=…`: a token from the
 *   realm, asked for the scopes the request needs (`repository:NAME:pull`,
 *   `…:pull,push`, plus `repository:FROM:pull` for a cross-repository mount)
 *   and the challenge's own. With an OAuth access token, that token; with a
 *   refresh token, `POST realm` (`grant_type=refresh_token`); otherwise
 *   `GET realm?service=…&scope=…`, with Basic credentials when there are
 *   some, anonymously when not (public repositories on Docker Hub, GHCR).
 *
 * Credentials go only to the registry they were configured for and to the
 * token realm that registry names (over https only); the HTTP client binds
 * every `Authorization` to one host, so a redirect elsewhere drops it.
 * Tokens are cached per registry and scope set; the scheme a registry used
 * is remembered, so later requests are authenticated up front.
 */
import { ErrorCode, ProvkitError } from '../../errors.js';
import type { HttpClient } from '../client.js';
import type { BearerCredential } from '../types.js';

/** Credentials for one repository. */
export type OciCredentials =
  | { readonly kind: 'basic'; readonly username: string; readonly password: string }
  | { readonly kind: 'oauth'; readonly accessToken: string; readonly refreshToken: string };

/** The credentials for a repository of a registry, or undefined (anonymous). */
export type OciCredentialsLookup = (registry: string, repository: string) => Promise<OciCredentials | undefined>;

/** One parsed challenge. */
export interface Challenge {
  /** Lower case: `basic`, `bearer`, … */
  readonly scheme: string;
  /**
   * The challenge's parameters (RFC 9110 §11.2 `auth-param`): names in lower case, values unquoted
   * (Bearer's `realm`, `service` and `scope`, distribution-spec's token authentication).
   */
  readonly params: Readonly<Record<string, string>>;
}

/**
 * Parses a `WWW-Authenticate` value (RFC 9110 §11.6.1: a scheme, then
 * comma-separated `name=value` or `name="quoted"` parameters). Only the first
 * challenge is used, as ORAS-Go does.
 */
export function parseChallenge(header: string | null): Challenge | undefined {
  if (header === null) return undefined;
  const m = /^\s*([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*)\s*(.*)$/s.exec(header);
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  const params: Record<string, string> = {};
  let rest = m[2]!;
  for (;;) {
    const p = /^\s*,?\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]*))\s*/s.exec(rest);
    if (!p) break;
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/gs, '$1') : (p[3] ?? '');
    rest = rest.slice(p[0].length);
  }
  return { scheme, params };
}

/** The scopes of a request: `repository:NAME:ACTIONS`. */
export function repositoryScope(repository: string, actions: readonly string[]): string {
  return `repository:${repository}:${actions.join(',')}`;
}

interface RegistryState {
  /** The scheme this registry asked for last. */
  scheme?: 'basic' | 'bearer';
  /** Bearer tokens by scope set (sorted, space-separated). */
  readonly tokens: Map<string, Promise<string | undefined>>;
}

/** See the module comment. One per run, shared by all repositories. */
export class OciAuth {
  private readonly registries = new Map<string, RegistryState>();
  private readonly credentialCache = new Map<string, Promise<OciCredentials | undefined>>();

  constructor(
    private readonly http: HttpClient,
    private readonly lookup: OciCredentialsLookup | undefined,
    private readonly userAgent?: string,
  ) {}

  private state(registry: string): RegistryState {
    let s = this.registries.get(registry);
    if (!s) this.registries.set(registry, (s = { tokens: new Map() }));
    return s;
  }

  /** The repository's credentials (looked up once). */
  credentials(registry: string, repository: string): Promise<OciCredentials | undefined> {
    const key = `${registry}/${repository}`;
    let p = this.credentialCache.get(key);
    if (!p) {
      p = this.lookup ? this.lookup(registry, repository) : Promise.resolve(undefined);
      this.credentialCache.set(key, p);
    }
    return p;
  }

  /**
   * The `Authorization` to send up front for `scopes` on `host` (the URL's
   * host of `registry`), from what earlier challenges taught; undefined when
   * nothing is known yet or nothing is needed.
   */
  async current(
    registry: string,
    host: string,
    repository: string,
    scopes: readonly string[],
  ): Promise<BearerCredential | undefined> {
    const st = this.state(registry);
    if (st.scheme === 'basic') {
      const c = await this.credentials(registry, repository);
      return c?.kind === 'basic' ? basicCredential(host, c) : undefined;
    }
    if (st.scheme === 'bearer') {
      const token = await st.tokens.get(scopeKey(scopes));
      return token === undefined ? undefined : { host, token, scheme: 'Bearer' };
    }
    return undefined;
  }

  /**
   * Answers a challenge: remembers the scheme and, for Bearer, fetches a
   * token. Returns whether a new attempt can be made with credentials it did
   * not have before.
   *
   * @throws {ProvkitError} `OCI_CREDENTIALS` when the token service fails.
   */
  async answer(
    challenge: Challenge,
    registry: string,
    repository: string,
    scopes: readonly string[],
    sent: BearerCredential | undefined,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const st = this.state(registry);
    if (challenge.scheme === 'basic') {
      st.scheme = 'basic';
      const c = await this.credentials(registry, repository);
      return c?.kind === 'basic' && sent?.scheme !== 'Basic';
    }
    if (challenge.scheme !== 'bearer') return false;
    st.scheme = 'bearer';
    const wanted = [
      ...new Set([...scopes, ...(challenge.params['scope'] ?? '').split(' ').filter((s) => s !== '')]),
    ].sort();
    const key = scopeKey(scopes);
    const had = await st.tokens.get(key);
    if (had !== undefined && sent?.token === had) {
      // The token the registry just refused: get a new one (it may have expired), once.
      st.tokens.delete(key);
    } else if (had !== undefined) {
      return true;
    }
    const p = this.fetchToken(challenge, registry, repository, wanted, signal);
    st.tokens.set(key, p);
    try {
      return (await p) !== undefined;
    } catch (err) {
      st.tokens.delete(key);
      throw err;
    }
  }

  private async fetchToken(
    challenge: Challenge,
    registry: string,
    repository: string,
    scopes: readonly string[],
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    const realmText = challenge.params['realm'];
    if (realmText === undefined || realmText === '') {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the OCI registry ${registry} asked for a bearer token without naming a token service (no realm)`,
        { url: `https://${registry}` },
      );
    }
    let realm: URL;
    try {
      realm = new URL(realmText);
    } catch {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the OCI registry ${registry} named an invalid token service ${JSON.stringify(realmText)}`,
        { url: `https://${registry}` },
      );
    }
    const creds = await this.credentials(registry, repository);
    if (creds?.kind === 'oauth' && creds.accessToken !== '') return creds.accessToken;
    if (creds !== undefined && realm.protocol !== 'https:') {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the OCI registry ${registry} named a token service over plain http (${realm.href}); provkit sends credentials only over https`,
        { url: realm.href },
      );
    }
    const service = challenge.params['service'];
    const common = {
      retries: 1,
      maxBytes: 1024 * 1024,
      ...(signal === undefined ? {} : { signal }),
      headers: { accept: 'application/json', ...(this.userAgent ? { 'user-agent': this.userAgent } : {}) },
    };
    let res;
    if (creds?.kind === 'oauth') {
      const form = new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: creds.refreshToken,
        client_id: 'provkit',
      });
      if (service !== undefined) form.set('service', service);
      if (scopes.length > 0) form.set('scope', scopes.join(' '));
      res = await this.http.send(realm.href, {
        ...common,
        method: 'POST',
        headers: { ...common.headers, 'content-type': 'application/x-www-form-urlencoded' },
        body: Buffer.from(form.toString()),
      });
    } else {
      const url = new URL(realm.href);
      if (service !== undefined) url.searchParams.set('service', service);
      for (const s of scopes) url.searchParams.append('scope', s);
      res = await this.http.send(url.href, {
        ...common,
        method: 'GET',
        ...(creds?.kind === 'basic' ? { credential: basicCredential(realm.host, creds) } : {}),
      });
    }
    if (res.status === 401 || res.status === 403) {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the token service ${realm.origin}${realm.pathname} of the OCI registry ${registry} refused ${creds === undefined ? 'an anonymous request' : 'the credentials'} (HTTP ${res.status}) for ${scopes.join(' ')}`,
        { url: realm.href, found: String(res.status) },
      );
    }
    if (res.status !== 200) {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the token service ${realm.origin}${realm.pathname} of the OCI registry ${registry} answered HTTP ${res.status}`,
        {
          url: realm.href,
          found: String(res.status),
        },
      );
    }
    let doc: unknown;
    try {
      doc = JSON.parse(res.body.toString('utf8'));
    } catch {
      doc = undefined;
    }
    const rec = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
    const token = typeof rec['token'] === 'string' && rec['token'] !== '' ? rec['token'] : rec['access_token'];
    if (typeof token !== 'string' || token === '') {
      throw new ProvkitError(
        ErrorCode.OCI_CREDENTIALS,
        `the token service ${realm.origin}${realm.pathname} of the OCI registry ${registry} answered without a token`,
        { url: realm.href },
      );
    }
    return token;
  }
}

function scopeKey(scopes: readonly string[]): string {
  return [...scopes].sort().join(' ');
}

function basicCredential(host: string, c: { username: string; password: string }): BearerCredential {
  return { host, token: Buffer.from(`${c.username}:${c.password}`).toString('base64'), scheme: 'Basic' };
}
