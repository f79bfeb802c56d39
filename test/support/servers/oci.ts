/**
 * A fake OCI registry for what a real one cannot show (issue 16): it serves
 * whatever content a test gives it, checked against nothing, so a layer
 * whose bytes do not match its digest, an index without `artifactType`, two
 * zip layers or a tag naming a platform manifest can be served as they are.
 * It also speaks the Bearer token protocol (`WWW-Authenticate: Bearer
 * realm=…/token`), which Debian's registry only does with an external token
 * server.
 *
 * Endpoints (OCI distribution spec): `GET /v2/NAME/tags/list`,
 * `GET|HEAD /v2/NAME/manifests/REF` (REF a tag or a digest; `Content-Type`
 * is the manifest's media type, `Docker-Content-Digest` the SHA-256 of its
 * body; like distribution 2.8 it answers 404 when `Accept` does not list
 * the media type), `GET|HEAD /v2/NAME/blobs/DIGEST`, and `GET /token`
 * (Basic credentials when `bearer.username` is set; any caller otherwise).
 * `GET /v2/` answers 200 and is logged (a client should never need it).
 */
import { createHash } from 'node:crypto';

import { type RouteResponse, startServer, type TestServer } from './http-server.js';

export interface FakeOciRepository {
  /** Tag → manifest digest. */
  readonly tags?: Record<string, string>;
  /** Digest → manifest (any bytes; `mediaType` is served as its Content-Type). */
  readonly manifests?: Record<string, { readonly mediaType: string; readonly body: Buffer }>;
  /** Digest → blob bytes (not checked against the digest). */
  readonly blobs?: Record<string, Buffer>;
  /**
   * A tag list of `pages` pages (each linked to the next with `Link: <…>; rel="next"`),
   * each about `bytes` long (tags of 100 characters that are not versions), instead of `tags`.
   */
  readonly tagPages?: { readonly pages: number; readonly bytes: number };
  /** Every request to the repository is answered with this status and body (a registry's error). */
  readonly error?: { readonly status: number; readonly body: string };
}

export interface FakeOciOptions {
  readonly repositories: Record<string, FakeOciRepository>;
  /** Require `Authorization: Bearer` tokens from `/token`, scoped to one repository each. */
  readonly bearer?: { readonly username?: string; readonly password?: string };
  /** Answer blob GETs with `307` to `BASE/DIGEST` (as registries redirect to their storage). */
  readonly blobRedirect?: string;
}

export interface FakeOciRegistry extends TestServer {
  /** Tokens issued so far (scope per token). */
  readonly tokens: Map<string, string>;
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A manifest as the fake serves it, with its real digest. */
export function ociManifest(doc: unknown): { digest: string; mediaType: string; body: Buffer } {
  const body = Buffer.from(JSON.stringify(doc));
  const mediaType =
    typeof doc === 'object' && doc !== null && typeof (doc as Record<string, unknown>)['mediaType'] === 'string'
      ? String((doc as Record<string, unknown>)['mediaType'])
      : 'application/octet-stream';
  return { digest: sha256(body), mediaType, body };
}

export { sha256 as ociDigest };

export async function startFakeOciRegistry(options: FakeOciOptions): Promise<FakeOciRegistry> {
  const tokens = new Map<string, string>();
  let counter = 0;
  let origin = '';
  const server = await startServer({
    handler: (req, url): RouteResponse | undefined => {
      const auth = req.headers.authorization ?? '';
      if (url.pathname === '/token') {
        const b = options.bearer;
        if (b?.username !== undefined) {
          const want = `Basic ${Buffer.from(`${b.username}:${b.password ?? ''}`).toString('base64')}`;
          if (auth !== want)
            return {
              status: 401,
              headers: { 'content-type': 'application/json' },
              body: '{"errors":[{"code":"UNAUTHORIZED","message":"bad credentials"}]}',
            };
        }
        const scope = url.searchParams.getAll('scope').join(' ');
        const token = `tok-${++counter}`;
        tokens.set(token, scope);
        return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, expires_in: 300 }) };
      }
      if (url.pathname === '/v2/' || url.pathname === '/v2')
        return { headers: { 'content-type': 'application/json' }, body: '{}' };
      const m = /^\/v2\/(.+?)\/(tags\/list|manifests\/([^/]+)|blobs\/([^/]+))$/.exec(url.pathname);
      if (!m) return undefined;
      const name = m[1]!;
      if (options.bearer) {
        const token = /^Bearer (.+)$/.exec(auth)?.[1];
        const scope = token === undefined ? undefined : tokens.get(token);
        if (scope === undefined || !scope.split(' ').some((s) => s.startsWith(`repository:${name}:`))) {
          return {
            status: 401,
            headers: {
              'content-type': 'application/json',
              'www-authenticate': `Bearer realm="${origin}/token",service="fake-oci",scope="repository:${name}:pull"`,
            },
            body: '{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}',
          };
        }
      }
      const repo = options.repositories[name];
      const unknown: RouteResponse = {
        status: 404,
        headers: { 'content-type': 'application/json' },
        body: '{"errors":[{"code":"NAME_UNKNOWN","message":"repository name not known to registry"}]}',
      };
      if (!repo) return unknown;
      if (repo.error)
        return { status: repo.error.status, headers: { 'content-type': 'application/json' }, body: repo.error.body };
      if (m[2] === 'tags/list' && repo.tagPages) {
        const page = Number(url.searchParams.get('page') ?? '1');
        const perPage = Math.max(1, Math.floor(repo.tagPages.bytes / 103));
        const tags = Array.from({ length: perPage }, (_, i) => `t${page}-${i}-`.padEnd(100, 'x'));
        return {
          headers: {
            'content-type': 'application/json',
            ...(page < repo.tagPages.pages ? { link: `</v2/${name}/tags/list?page=${page + 1}>; rel="next"` } : {}),
          },
          body: JSON.stringify({ name, tags }),
        };
      }
      if (m[2] === 'tags/list')
        return {
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name, tags: Object.keys(repo.tags ?? {}) }),
        };
      if (m[3] !== undefined) {
        const ref = decodeURIComponent(m[3]);
        const digest = ref.startsWith('sha256:') ? ref : repo.tags?.[ref];
        const manifest = digest === undefined ? undefined : repo.manifests?.[digest];
        const accept = req.headers.accept ?? '';
        if (manifest === undefined || !accept.split(',').some((a) => a.trim().split(';')[0] === manifest.mediaType)) {
          return {
            status: 404,
            headers: { 'content-type': 'application/json' },
            body: '{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}',
          };
        }
        return {
          headers: { 'content-type': manifest.mediaType, 'docker-content-digest': sha256(manifest.body) },
          body: manifest.body,
        };
      }
      const blob = repo.blobs?.[decodeURIComponent(m[4]!)];
      if (blob !== undefined && options.blobRedirect !== undefined && req.method === 'GET') {
        return { status: 307, headers: { location: `${options.blobRedirect}/${decodeURIComponent(m[4]!)}` }, body: '' };
      }
      if (blob === undefined)
        return {
          status: 404,
          headers: { 'content-type': 'application/json' },
          body: '{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}',
        };
      return { headers: { 'content-type': 'application/octet-stream' }, body: blob };
    },
  });
  origin = server.origin;
  return Object.assign(server, { tokens });
}
