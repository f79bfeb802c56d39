// Issue 16: what a real registry cannot show, from a fake one in another
// process (test/support/servers/oci.ts): hostile layouts are refused with
// OpenTofu's diagnostic and nothing written, and the Bearer token protocol
// (a token service, credentials only to the registry and its realm).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { e2eWorkspace, requiresTf, runCli, type E2eWorkspace, flat } from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProviderZip } from '../support/servers/packages.js';
import type { FakeOciRepository } from '../support/servers/oci.js';

const INDEX = 'application/vnd.oci.image.index.v1+json';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const manifest = (doc: Record<string, unknown>): { digest: string; mediaType: string; body: Buffer } => {
  const body = Buffer.from(JSON.stringify(doc));
  return { digest: sha(body), mediaType: String(doc['mediaType']), body };
};

interface Variant {
  /** Change the platform manifest before it is serialized. */
  platformManifest?: (m: Record<string, unknown>, layer: Record<string, unknown>) => Record<string, unknown>;
  index?: (i: Record<string, unknown>) => Record<string, unknown>;
  /** The tag names the platform manifest, not the index. */
  tagPlatformManifest?: boolean;
  /** Serve other bytes as the layer blob. */
  blob?: (zip: Buffer) => Buffer;
}

/** acme/demo 1.0.0 for linux_amd64 in OpenTofu's layout, with a variant applied. */
function repository(zip: Buffer, v: Variant = {}): FakeOciRepository {
  const config = Buffer.from('{}');
  const layer = { mediaType: 'archive/zip', digest: sha(zip), size: zip.length };
  let pm: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: MANIFEST,
    artifactType: 'application/vnd.opentofu.provider-target',
    config: { mediaType: 'application/vnd.oci.empty.v1+json', digest: sha(config), size: 2 },
    layers: [layer],
  };
  if (v.platformManifest) pm = v.platformManifest(pm, layer);
  const p = manifest(pm);
  let ix: Record<string, unknown> = {
    schemaVersion: 2,
    mediaType: INDEX,
    artifactType: 'application/vnd.opentofu.provider',
    manifests: [
      {
        mediaType: MANIFEST,
        digest: p.digest,
        size: p.body.length,
        platform: { architecture: 'amd64', os: 'linux' },
        artifactType: 'application/vnd.opentofu.provider-target',
      },
    ],
  };
  if (v.index) ix = v.index(ix);
  const i = manifest(ix);
  return {
    tags: { '1.0.0': v.tagPlatformManifest ? p.digest : i.digest, latest: i.digest },
    manifests: {
      [p.digest]: { mediaType: p.mediaType, body: p.body },
      [i.digest]: { mediaType: i.mediaType, body: i.body },
    },
    blobs: { [layer.digest]: v.blob ? v.blob(zip) : zip, [sha(config)]: config },
  };
}

const HOSTILE: Record<string, { variant: Variant; message: string }> = {
  'a layer whose bytes do not match its digest': {
    variant: {
      blob: (zip) => Buffer.concat([zip.subarray(0, zip.length - 1), Buffer.from([zip[zip.length - 1]! ^ 0xff])]),
    },
    message: 'provider package does not match digest sha256:',
  },
  'an index without artifactType': {
    variant: {
      index: (i) => {
        const { artifactType: _drop, ...rest } = i;
        return rest;
      },
    },
    message: 'unexpected artifact type ""',
  },
  'two zip layers': {
    variant: {
      platformManifest: (m, layer) => ({ ...m, layers: [layer, { ...layer, annotations: { again: 'yes' } }] }),
    },
    message: 'ambiguous manifest declares multiple eligible provider packages',
  },
  'a tag that names a platform manifest directly': {
    variant: { tagPlatformManifest: true },
    message:
      'tag refers directly to image manifest, but OpenTofu providers require an index manifest for multi-platform support',
  },
  'a container image index (no artifact types at all)': {
    variant: {
      index: (i) => ({
        schemaVersion: 2,
        mediaType: INDEX,
        artifactType: i['artifactType'],
        manifests: (i['manifests'] as Array<Record<string, unknown>>).map(({ artifactType: _a, ...rest }) => rest),
      }),
    },
    message:
      'provider image manifest has unsupported artifact type; is this a container image, rather than an OpenTofu provider?',
  },
};

const EVIL_CODE = 'DENIED\u001b[2J\u001b[H';
const EVIL_MESSAGE =
  'no\r\n- Retrieved registry.example.test/acme/demo 1.0.0 for linux_amd64 (signed, key ID 0000)\n\nSuccess! OpenTofu has validated the lock file and found no need for changes.\u001b]0;owned\u0007';

let host: ServerHost;
let fake: RemoteServer;
let w: E2eWorkspace;
let zip: Buffer;

beforeAll(async () => {
  host = await startHost();
  zip = await makeProviderZip('demo', '1.0.0', 'linux_amd64');
  const repositories: Record<string, FakeOciRepository> = {
    'valid/acme/demo': repository(zip),
    // An index listing no platform at all: nothing to install, nothing to check.
    'empty-index/acme/demo': repository(zip, { index: (i) => ({ ...i, manifests: [] }) }),
    // 40 pages of about 2 MiB: each page is far below a per-page limit, together far above a total one.
    'pages/acme/demo': { tagPages: { pages: 40, bytes: 2 * 1024 * 1024 } },
    // A registry whose error text would clear the screen, set the window title and forge lines.
    'evil/acme/demo': {
      error: { status: 400, body: JSON.stringify({ errors: [{ code: EVIL_CODE, message: EVIL_MESSAGE }] }) },
    },
  };
  for (const [name, c] of Object.entries(HOSTILE)) repositories[`${slug(name)}/acme/demo`] = repository(zip, c.variant);
  fake = await host.oci({ repositories });
  w = e2eWorkspace(fake.caPath);
});
afterAll(async () => {
  await host.close();
  w.remove();
});

function slug(s: string): string {
  return s.replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

const MAIN = requiresTf({ demo: 'registry.example.test/acme/demo' });

function ociConfig(dir: string, prefix: string, extra = ''): string {
  const file = join(dir, 'cli.tfrc');
  writeFileSync(
    file,
    `${extra}provider_installation {\n  oci_mirror {\n    repository_template = "${fake.host}/${prefix}/\${namespace}/\${type}"\n    include             = ["registry.example.test/*/*"]\n  }\n}\n`,
  );
  return file;
}

describe('issue 16: hostile OCI layouts are refused with a diagnostic, nothing written', () => {
  it('the valid layout locks and installs: h1: and zh:, no GET /v2/, an explicit Accept on every request', async () => {
    const p = w.project('valid', { 'main.tf': MAIN });
    await fake.mark();
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${fake.host}/valid/{namespace}/{type}`], {
      cwd: p,
      env: w.env,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lock = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
    expect(lock).toContain(`"zh:${sha(zip).slice('sha256:'.length)}"`);
    expect(lock).toMatch(/"h1:[A-Za-z0-9+/=]{44}"/);
    const log = await fake.log();
    expect(log.some((q) => q.pathname === '/v2/' || q.pathname === '/v2')).toBe(false);
    for (const q of log) expect(q.headers['accept']).toBeTruthy();
    const tagRequest = log.find((q) => q.pathname === '/v2/valid/acme/demo/manifests/1.0.0');
    expect(String(tagRequest?.headers['accept'])).toContain(INDEX);
    const inst = await runCli(['install'], { cwd: p, env: { ...w.env, TF_CLI_CONFIG_FILE: ociConfig(p, 'valid') } });
    expect(inst.stderr).toBe('');
    expect(inst.code).toBe(0);
    expect(
      existsSync(
        join(
          p,
          '.terraform/providers/registry.example.test/acme/demo/1.0.0/linux_amd64/terraform-provider-demo_v1.0.0',
        ),
      ),
    ).toBe(true);
    expect(w.tmpLeftovers()).toEqual([]);
  });

  for (const [name, c] of Object.entries(HOSTILE)) {
    it(`${name}: lock and install exit 1 with "${c.message}"`, async () => {
      const p = w.project(slug(name), { 'main.tf': MAIN });
      const l = await runCli(
        ['lock', '-platform=linux_amd64', `-oci-mirror=${fake.host}/${slug(name)}/{namespace}/{type}`],
        { cwd: p, env: w.env },
      );
      expect(l.code).toBe(1);
      expect(flat(l.stderr)).toContain(c.message);
      expect(flat(l.stderr)).toContain('registry.example.test/acme/demo');
      expect(l.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
      const inst = await runCli(['install'], {
        cwd: p,
        env: { ...w.env, TF_CLI_CONFIG_FILE: ociConfig(p, slug(name)) },
      });
      expect(inst.code).toBe(1);
      expect(flat(inst.stderr)).toContain(c.message);
      expect(existsSync(join(p, '.terraform/providers/registry.example.test/acme/demo'))).toBe(false);
      expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
      expect(w.tmpLeftovers()).toEqual([]);
    });
  }
});

describe('issue 16: Bearer token challenges', () => {
  let secured: RemoteServer;
  let open: RemoteServer;
  beforeAll(async () => {
    secured = await host.oci({
      repositories: { 'p/acme/demo': repository(zip) },
      bearer: { username: 'robot', password: 'hunter2' },
    });
    open = await host.oci({ repositories: { 'p/acme/demo': repository(zip) }, bearer: {} });
  });

  it('credentials go to the token service as Basic, the token to the registry (blob download included)', async () => {
    const p = w.project('bearer', { 'main.tf': MAIN });
    const cfg = join(p, 'cli.tfrc');
    writeFileSync(cfg, `oci_credentials "${secured.host}" {\n  username = "robot"\n  password = "hunter2"\n}\n`);
    await secured.mark();
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${secured.host}/p/{namespace}/{type}`], {
      cwd: p,
      env: { ...w.env, SSL_CERT_FILE: secured.caPath, TF_CLI_CONFIG_FILE: cfg },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const log = await secured.log();
    const tokenRequests = log.filter((q) => q.pathname === '/token');
    expect(tokenRequests.length).toBeGreaterThan(0);
    for (const q of tokenRequests)
      expect(q.headers['authorization']).toBe(`Basic ${Buffer.from('robot:hunter2').toString('base64')}`);
    const blob = log.find((q) => q.pathname.includes('/blobs/') && q.status === 200);
    expect(String(blob?.headers['authorization'])).toMatch(/^Bearer tok-\d+$/);
    // Registry requests never carry the password.
    for (const q of log.filter((x) => x.pathname.startsWith('/v2/')))
      expect(String(q.headers['authorization'] ?? '')).not.toContain('Basic');
    expect(w.tmpLeftovers()).toEqual([]);
  });

  it('without credentials the token service refuses: exit 1, the registry named, nothing written', async () => {
    const p = w.project('bearer-anon', { 'main.tf': MAIN });
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${secured.host}/p/{namespace}/{type}`], {
      cwd: p,
      env: { ...w.env, SSL_CERT_FILE: secured.caPath },
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`of the OCI registry ${secured.host} refused an anonymous request (HTTP 401)`);
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });

  it('a blob redirected to another host (storage) is fetched without the registry token', async () => {
    const repo = repository(zip);
    const storage = await host.files({
      files: Object.fromEntries(Object.entries(repo.blobs ?? {}).map(([d, b]) => [`/${d}`, b])),
    });
    const redirecting = await host.oci({
      repositories: { 'p/acme/demo': repo },
      bearer: {},
      blobRedirect: storage.origin,
    });
    const p = w.project('bearer-redirect', { 'main.tf': MAIN });
    const cas = join(p, 'cas.pem');
    writeFileSync(cas, `${redirecting.caPem}${storage.caPem}`);
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${redirecting.host}/p/{namespace}/{type}`], {
      cwd: p,
      env: { ...w.env, SSL_CERT_FILE: cas },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const got = await storage.log();
    expect(got.length).toBe(1);
    expect(got[0]!.headers['authorization']).toBeUndefined();
    const sent = (await redirecting.log()).find((q) => q.pathname.includes('/blobs/'));
    expect(String(sent?.headers['authorization'])).toMatch(/^Bearer /);
  });

  it('a public repository behind a token service: anonymous tokens work', async () => {
    const p = w.project('bearer-public', { 'main.tf': MAIN });
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${open.host}/p/{namespace}/{type}`], {
      cwd: p,
      env: { ...w.env, SSL_CERT_FILE: open.caPath },
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });
});

describe('a registry is bounded, checked and quoted like any other source', () => {
  it('a tag list is bounded in total, all pages together: 40 pages of 2 MiB stop at 16 MiB, one diagnostic', async () => {
    const p = w.project('tag-pages', { 'main.tf': MAIN });
    await fake.mark();
    const r = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${fake.host}/pages/{namespace}/{type}`], {
      cwd: p,
      env: w.env,
    });
    expect(r.code).toBe(1);
    expect(flat(r.stderr)).toContain(`the tag list of ${fake.host}/pages/acme/demo is larger than provkit reads`);
    expect(flat(r.stderr)).toContain('at most 16777216 bytes');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    // The page that broke the budget was the last one asked for.
    const pages = (await fake.log()).filter((q) => q.pathname === '/v2/pages/acme/demo/tags/list');
    expect(pages.length).toBeLessThanOrEqual(9);
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });

  it("verify -mirror=oci:// reports PLATFORM_NOT_IN_MIRROR when the locked version's index lists no platform", async () => {
    const p = w.project('empty-index', { 'main.tf': MAIN });
    const l = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${fake.host}/valid/{namespace}/{type}`], {
      cwd: p,
      env: w.env,
    });
    expect(l.code).toBe(0);
    const mirror = `-mirror=oci://${fake.host}/empty-index/{namespace}/{type}`;
    const given = await runCli(['verify', mirror, '-platform=linux_amd64'], { cwd: p, env: w.env });
    expect(given.code).toBe(1);
    expect(given.stdout).toContain(
      "registry.example.test/acme/demo 1.0.0 linux_amd64: no package in the mirror for this platform, so the lock file's coverage of it cannot be checked",
    );
    expect(given.stdout).not.toContain('no problems');
    const all = await runCli(['verify', mirror, '-json'], { cwd: p, env: w.env });
    expect(all.code).toBe(1);
    const problems = all.stdout
      .split('\n')
      .filter((x) => x !== '')
      .map((x) => JSON.parse(x) as Record<string, unknown>)
      .filter((m) => m['type'] === 'verify_problem');
    expect(problems.map((m) => [m['code'], m['platform']])).toEqual([['PLATFORM_NOT_IN_MIRROR', null]]);
  });

  it("a registry's error text reaches human output escaped, even with NO_COLOR into a pipe, and -json as sent", async () => {
    const p = w.project('evil-text', { 'main.tf': MAIN });
    const args = ['lock', '-platform=linux_amd64', `-oci-mirror=${fake.host}/evil/{namespace}/{type}`];
    const r = await runCli(args, { cwd: p, env: { ...w.env, NO_COLOR: '1' } });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const lines = `${r.stdout}\n${r.stderr}`.split('\n');
    expect(lines.filter((x) => x.startsWith('- Retrieved') || x.startsWith('Success!'))).toEqual([]);
    expect(flat(r.stderr)).toContain(
      'HTTP 400: DENIED\\x1b[2J\\x1b[H: no\\r\\n- Retrieved registry.example.test/acme/demo',
    );
    expect(flat(r.stderr)).toContain('no need for changes.\\x1b]0;owned\\a');

    const j = await runCli([...args, '-json'], { cwd: p, env: w.env });
    expect(j.code).toBe(1);
    const details = j.stdout
      .split('\n')
      .filter((x) => x !== '')
      .map((x) => JSON.parse(x) as { type: string; diagnostic?: { detail: string } })
      .filter((m) => m.type === 'diagnostic')
      .map((m) => m.diagnostic!.detail);
    // JSON carries the text (JSON-escaped); an error message stays one line.
    expect(details.join('\n')).toContain('DENIED\u001b[2J\u001b[H: no\\r\\n- Retrieved');
    expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
  });
});
