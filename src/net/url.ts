/**
 * URL rules of the HTTP client: which URLs it accepts, how they are shown
 * (never with a password), and userinfo sent as Basic authentication.
 */
import { ErrorCode, ProvkitError } from '../errors.js';

/** Parses an absolute http(s) URL or throws `USAGE` (the public boundary; see {@link checkHttpURL}). */
export function parseHttpURL(url: string): URL {
  const checked = checkHttpURL(url);
  if (checked instanceof ProvkitError) throw checked;
  return checked;
}

/** An absolute http(s) URL, or the `USAGE` error saying why `url` is not one. */
export function checkHttpURL(url: string): URL | ProvkitError {
  let u: URL;
  try {
    u = new URL(url);
  } catch (err) {
    return new ProvkitError(ErrorCode.USAGE, `invalid URL ${JSON.stringify(url)}`, { url, cause: err });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    const shown = redactURL(url);
    return new ProvkitError(
      ErrorCode.USAGE,
      `unsupported URL scheme ${JSON.stringify(u.protocol.slice(0, -1))} in ${shown}: only http and https`,
      { url: shown },
    );
  }
  return u;
}

/**
 * `url` with its password replaced by `xxxxx`, as Go's `URL.Redacted`: the
 * form every message, event and error context shows, so that credentials in
 * a URL never reach the output.
 */
export function redactURL(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return String(url);
  }
  if (u.password !== '') u.password = 'xxxxx';
  return u.href;
}

function decodeUserinfo(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/**
 * A URL's userinfo as the request's `Authorization: Basic`, and the URL to
 * send without it. Go's client does this for every request whose URL has
 * userinfo (net/http `client.go` `send`: the decoded user and password,
 * unless the request already has an Authorization header), so OpenTofu and
 * terraform download a `download_url` of `https://user:pass@host/…` with
 * Basic authentication (terraform 1.11.4 observed: `Basic dXNlcjpwQHNz` for
 * `user:p%40ss@`). A relative redirect keeps the userinfo (the WHATWG and Go
 * URL resolutions both carry it over); an absolute one without it drops it.
 */
export function splitUserinfo(u: URL): { href: string; authorization: string | undefined } {
  if (u.username === '' && u.password === '') return { href: u.href, authorization: undefined };
  const bare = new URL(u.href);
  bare.username = '';
  bare.password = '';
  const pair = `${decodeUserinfo(u.username)}:${decodeUserinfo(u.password)}`;
  return { href: bare.href, authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` };
}
