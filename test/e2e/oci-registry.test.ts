// Issue 16: OCI registries as provider mirrors, against a real registry
// (Debian's docker-registry, the CNCF distribution registry 2.8.x; see
// test/support/docker-registry.ts). provkit runs as a child process; the
// origin registry is the fake of test/support/remote in another process.
//
// Round trip: publish (`mirror oci://…`) → lock (`lock -oci-mirror`) →
// install (`oci_mirror` in the CLI configuration), anonymous and with Basic
// authentication (htpasswd) from a Docker config file or an oci_credentials
// block. The published zips are the upstream ones byte for byte; publishing
// again changes no digest; the OCI lock equals the origin registry's for the
// requested platforms.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  dockerRegistryBinary,
  htpasswdBinary,
  registryManifest,
  registryRequest,
  SKIP_REASON,
  startDockerRegistry,
  type DockerRegistry,
} from '../support/docker-registry.js';
import {
  e2eWorkspace,
  requiresTf,
  runCli,
  type CliResult,
  type E2eWorkspace,
  flat,
  jsonLines,
} from '../support/e2e.js';
import { startHost, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { makeProvider, type FakeProvider } from '../support/servers/packages.js';

const BIN = dockerRegistryBinary();
const PLATFORMS = ['linux_amd64', 'darwin_arm64'];
const TEMPLATE = 'providers/{namespace}/{type}';

let host: ServerHost;
let origin: RemoteServer;
let demo: FakeProvider;
let tools: FakeProvider;
let reg: DockerRegistry;
let w: E2eWorkspace;

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** The upstream zip of a fake provider. */
function upstream(p: FakeProvider, version: string, platform: string): Buffer {
  const zip = p.versions.find((v) => v.version === version)?.packages.find((x) => x.platform === platform)?.zip;
  if (!zip) throw new Error(`no ${p.type} ${version} ${platform}`);
  return zip;
}

/** Hashes of a lock file's provider block, by provider address. */
function lockHashes(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of text.matchAll(/provider "([^"]+)" \{[\s\S]*?hashes = \[([\s\S]*?)\]/g)) {
    out.set(
      m[1]!,
      [...m[2]!.matchAll(/"([^"]+)"/g)].map((x) => x[1]!),
    );
  }
  return out;
}

function ok(r: CliResult): void {
  expect(r.timedOut).toBe(false);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
}

/** A workspace trusting both CAs: the origin registry's (its process made its own) and the OCI registry's. */
function workspaceTrusting(...pems: string[]): E2eWorkspace {
  const ws = e2eWorkspace();
  const bundle = join(ws.base, 'cas.pem');
  writeFileSync(bundle, pems.join(''));
  ws.env['SSL_CERT_FILE'] = bundle;
  return ws;
}

function tofurc(dir: string, body: string): string {
  const file = join(dir, 'cli.tfrc');
  writeFileSync(file, body);
  return file;
}

describe.skipIf(BIN === undefined)(
  `OCI mirrors against a real registry${BIN === undefined ? ` (${SKIP_REASON})` : ''}`,
  () => {
    beforeAll(async () => {
      host = await startHost();
      demo = await makeProvider('acme', 'demo', ['1.0.0', '1.1.0'], ['linux_amd64', 'darwin_arm64', 'windows_amd64']);
      tools = await makeProvider('acme', 'tools', ['0.3.0'], ['linux_amd64', 'darwin_arm64']);
      origin = await host.registry({ providers: [demo, tools] });
      reg = await startDockerRegistry();
      w = workspaceTrusting(origin.caPem, reg.caPem);
    }, 60_000);
    afterAll(async () => {
      await reg?.stop();
      await host?.close();
      w?.remove();
    });

    const main = (): string =>
      requiresTf({ demo: `${origin.host}/acme/demo@~> 1.0`, tools: `${origin.host}/acme/tools` });

    it("publish → lock → install round trip, anonymous: upstream zips byte for byte, stable digests, the lock equals the origin registry's", async () => {
      const p = w.project('round-trip', { 'main.tf': main() });
      const target = `oci://${reg.host}/${TEMPLATE}`;
      const publish = await runCli(['mirror', ...PLATFORMS.map((x) => `-platform=${x}`), target], {
        cwd: p,
        env: w.env,
      });
      ok(publish);
      expect(publish.stdout).toContain(`Tagged ${reg.host}/providers/acme/demo:1.1.0 as sha256:`);
      // Before issue 16 this exited 0 having written a directory named `oci:` here.
      expect(existsSync(join(p, 'oci:'))).toBe(false);
      expect(w.tmpLeftovers()).toEqual([]);

      // The layout, as fetched from the registry.
      const index = await registryManifest(reg, 'providers/acme/demo', '1.1.0');
      expect(index.status).toBe(200);
      expect(index.doc['mediaType']).toBe('application/vnd.oci.image.index.v1+json');
      expect(index.doc['artifactType']).toBe('application/vnd.opentofu.provider');
      const entries = index.doc['manifests'] as Array<Record<string, unknown>>;
      expect(entries.map((e) => e['platform'])).toEqual([
        { architecture: 'arm64', os: 'darwin' },
        { architecture: 'amd64', os: 'linux' },
      ]);
      for (const e of entries) {
        expect(e['artifactType']).toBe('application/vnd.opentofu.provider-target');
        expect(e['mediaType']).toBe('application/vnd.oci.image.manifest.v1+json');
        const m = await registryManifest(reg, 'providers/acme/demo', String(e['digest']));
        expect(m.digest).toBe(e['digest']);
        expect(m.doc['artifactType']).toBe('application/vnd.opentofu.provider-target');
        const layers = m.doc['layers'] as Array<Record<string, unknown>>;
        expect(layers).toHaveLength(1);
        expect(layers[0]!['mediaType']).toBe('archive/zip');
        const platform = e['platform'] as { os: string; architecture: string };
        const zip = upstream(demo, '1.1.0', `${platform.os}_${platform.architecture}`);
        expect(layers[0]!['digest']).toBe(`sha256:${sha256(zip)}`);
        // The blob is the upstream zip, byte for byte.
        const blob = await registryRequest(reg, `/v2/providers/acme/demo/blobs/${String(layers[0]!['digest'])}`);
        expect(blob.status).toBe(200);
        expect(Buffer.compare(blob.body, zip)).toBe(0);
        // The config blob is there too (a registry refuses a manifest without it).
        const config = m.doc['config'] as { digest: string };
        expect((await registryRequest(reg, `/v2/providers/acme/demo/blobs/${config.digest}`)).body.toString()).toBe(
          JSON.stringify({ architecture: platform.architecture, os: platform.os }),
        );
      }
      const tagsBefore = (
        await registryRequest(reg, '/v2/providers/acme/demo/tags/list', 'application/json')
      ).body.toString();

      // Publishing again: nothing uploaded, no digest changes.
      const again = await runCli(['mirror', ...PLATFORMS.map((x) => `-platform=${x}`), target], { cwd: p, env: w.env });
      ok(again);
      expect(again.stdout).toContain('0 blobs uploaded (0 bytes)');
      expect(again.stdout).toContain('0 tags pushed, 2 unchanged');
      expect((await registryManifest(reg, 'providers/acme/demo', '1.1.0')).digest).toBe(index.digest);
      expect(
        (await registryRequest(reg, '/v2/providers/acme/demo/tags/list', 'application/json')).body.toString(),
      ).toBe(tagsBefore);

      // lock -oci-mirror, and the same lock from the origin registry.
      const lockOci = w.project('round-trip-lock-oci', { 'main.tf': main() });
      const l1 = await runCli(
        ['lock', ...PLATFORMS.map((x) => `-platform=${x}`), `-oci-mirror=${reg.host}/${TEMPLATE}`],
        { cwd: lockOci, env: w.env },
      );
      ok(l1);
      const lockOrigin = w.project('round-trip-lock-origin', { 'main.tf': main() });
      ok(await runCli(['lock', ...PLATFORMS.map((x) => `-platform=${x}`)], { cwd: lockOrigin, env: w.env }));
      const oci = lockHashes(readFileSync(join(lockOci, '.terraform.lock.hcl'), 'utf8'));
      const fromOrigin = lockHashes(readFileSync(join(lockOrigin, '.terraform.lock.hcl'), 'utf8'));
      for (const [provider, p2, version] of [
        [`${origin.host}/acme/demo`, demo, '1.1.0'],
        [`${origin.host}/acme/tools`, tools, '0.3.0'],
      ] as const) {
        const requestedZh = PLATFORMS.map((pl) => `zh:${sha256(upstream(p2, version, pl))}`);
        const originH1 = fromOrigin.get(provider)!.filter((h) => h.startsWith('h1:'));
        // h1: per requested platform and zh: of those platforms only (no trust in other platforms' hashes).
        expect(oci.get(provider)).toEqual([...originH1, ...requestedZh].sort());
        expect(fromOrigin.get(provider)).toEqual(expect.arrayContaining(requestedZh));
      }
      expect(w.tmpLeftovers()).toEqual([]);

      // install from the OCI mirror: with the OCI lock, and with the origin registry's lock.
      for (const [name, lockDir] of [
        ['oci lock', lockOci],
        ['origin lock', lockOrigin],
      ] as const) {
        const inst = w.project(`round-trip-install-${name.replace(' ', '-')}`, {
          'main.tf': main(),
          '.terraform.lock.hcl': readFileSync(join(lockDir, '.terraform.lock.hcl'), 'utf8'),
        });
        const cfg = tofurc(
          inst,
          `provider_installation {\n  oci_mirror {\n    repository_template = "${reg.host}/providers/\${namespace}/\${type}"\n    include             = ["${origin.host}/*/*"]\n  }\n}\n`,
        );
        const before = readFileSync(join(inst, '.terraform.lock.hcl'), 'utf8');
        const r = await runCli(['install'], { cwd: inst, env: { ...w.env, TF_CLI_CONFIG_FILE: cfg } });
        ok(r);
        expect(r.stdout).toContain('Installed');
        expect(
          existsSync(
            join(
              inst,
              `.terraform/providers/${origin.host}/acme/demo/1.1.0/linux_amd64/terraform-provider-demo_v1.1.0`,
            ),
          ),
        ).toBe(true);
        // The lock already covered this platform: unchanged.
        expect(readFileSync(join(inst, '.terraform.lock.hcl'), 'utf8')).toBe(before);
        expect(w.tmpLeftovers()).toEqual([]);
      }
    }, 120_000);

    it('a version published for more platforms later keeps the earlier ones; the index lists them sorted', async () => {
      const p = w.project('more-platforms', { 'main.tf': requiresTf({ demo: `${origin.host}/acme/demo@1.0.0` }) });
      const target = `oci://${reg.host}/more/{namespace}/{type}`;
      ok(await runCli(['mirror', '-platform=windows_amd64', target], { cwd: p, env: w.env }));
      const first = await registryManifest(reg, 'more/acme/demo', '1.0.0');
      ok(await runCli(['mirror', '-platform=linux_amd64', target], { cwd: p, env: w.env }));
      const second = await registryManifest(reg, 'more/acme/demo', '1.0.0');
      expect((second.doc['manifests'] as Array<{ platform: unknown }>).map((e) => e.platform)).toEqual([
        { architecture: 'amd64', os: 'linux' },
        { architecture: 'amd64', os: 'windows' },
      ]);
      expect(second.digest).not.toBe(first.digest);
      // Same set again: same bytes.
      const third = await runCli(['mirror', '-platform=linux_amd64', '-platform=windows_amd64', target], {
        cwd: p,
        env: w.env,
      });
      ok(third);
      expect((await registryManifest(reg, 'more/acme/demo', '1.0.0')).digest).toBe(second.digest);
    }, 60_000);

    it('publishes of one version for different platforms at the same time lose none: the tag holds every platform', async () => {
      // distribution 2.8 ignores If-Match on a manifest PUT: what keeps both is the check after writing.
      const p = w.project('race', { 'main.tf': requiresTf({ demo: `${origin.host}/acme/demo@1.0.0` }) });
      const platforms = ['darwin_arm64', 'linux_amd64', 'windows_amd64'];
      // Three repositories, three publishers each, all nine at once.
      const rounds = [1, 2, 3];
      const runs = await Promise.all(
        rounds.flatMap((round) =>
          platforms.map((x) =>
            runCli(['mirror', `-platform=${x}`, `oci://${reg.host}/race${round}/{namespace}/{type}`], {
              cwd: p,
              env: w.env,
            }),
          ),
        ),
      );
      for (const r of runs) ok(r);
      for (const round of rounds) {
        const index = await registryManifest(reg, `race${round}/acme/demo`, '1.0.0');
        const listed = (index.doc['manifests'] as Array<{ platform: { os: string; architecture: string } }>).map(
          (e) => `${e.platform.os}_${e.platform.architecture}`,
        );
        expect(listed, `race${round}`).toEqual(platforms);
      }
      expect(w.tmpLeftovers()).toEqual([]);
    }, 120_000);

    it('large blobs go up in chunks (PATCH) and arrive intact; blobs another repository has are mounted, not uploaded', async () => {
      const p = w.project('chunks', { 'main.tf': main() });
      const r = await runCli(['mirror', '-platform=linux_amd64', `oci://${reg.host}/chunked/{namespace}/{type}`], {
        cwd: p,
        env: { ...w.env, PROVKIT_OCI_CHUNK_SIZE: '100' },
      });
      ok(r);
      // The platform config of linux_amd64 went up once, then was mounted into the other repository.
      expect(r.stdout).toMatch(
        /Mounted config sha256:[0-9a-f]{64} into [^ ]+\/chunked\/acme\/(demo|tools) from [^ ]+\/chunked\/acme\/(demo|tools)/,
      );
      expect(reg.log()).toMatch(/"PATCH \/v2\/chunked\/acme\/demo\/blobs\/uploads\//);
      expect(reg.log()).toMatch(/mount=sha256/);
      const m = await registryManifest(reg, 'chunked/acme/demo', '1.1.0');
      const entry = (m.doc['manifests'] as Array<{ digest: string }>)[0]!;
      const pm = await registryManifest(reg, 'chunked/acme/demo', entry.digest);
      const layer = (pm.doc['layers'] as Array<{ digest: string }>)[0]!;
      const blob = await registryRequest(reg, `/v2/chunked/acme/demo/blobs/${layer.digest}`);
      expect(Buffer.compare(blob.body, upstream(demo, '1.1.0', 'linux_amd64'))).toBe(0);
    }, 60_000);

    it('a package that fails to download moves no tag: exit 1, a diagnostic naming it, nothing left in TMPDIR', async () => {
      const p = w.project('fail', { 'main.tf': main() });
      await origin.clearFaults();
      await origin.setFault(
        await origin.path('archive', 'acme', 'demo', '1.1.0', 'darwin_arm64'),
        { kind: 'status', status: 404 },
        'archives',
      );
      try {
        const r = await runCli(
          ['mirror', ...PLATFORMS.map((x) => `-platform=${x}`), `oci://${reg.host}/failing/{namespace}/{type}`],
          { cwd: p, env: w.env },
        );
        expect(r.code).toBe(1);
        expect(flat(r.stderr)).toContain('Error: Cannot publish provider package');
        expect(flat(r.stderr)).toContain('acme/demo 1.1.0 for darwin_arm64: ');
        // Nothing was published: no summary of it.
        expect(r.stdout).not.toContain('Published to');
        expect(r.stderr).not.toMatch(/\n\s+at /);
        expect(w.tmpLeftovers()).toEqual([]);
      } finally {
        await origin.clearFaults();
      }
      // Neither provider got a tag, although tools and demo linux_amd64 were fine.
      for (const repo of ['failing/acme/demo', 'failing/acme/tools']) {
        const tags = await registryRequest(reg, `/v2/${repo}/tags/list`, 'application/json');
        const list =
          tags.status === 200 ? ((JSON.parse(tags.body.toString()) as { tags: string[] | null }).tags ?? []) : [];
        expect(list).toEqual([]);
      }
    }, 60_000);

    it('bundle import into the registry serves install; a tampered bundle publishes nothing', async () => {
      const p = w.project('bundle', { 'main.tf': main() });
      ok(
        await runCli(['bundle', 'create', ...PLATFORMS.map((x) => `-platform=${x}`), 'providers.tar'], {
          cwd: p,
          env: w.env,
        }),
      );
      const imp = await runCli(
        [
          'bundle',
          'import',
          '-lock-out=bundle.lock.hcl',
          'providers.tar',
          `oci://${reg.host}/airgap/{namespace}/{type}`,
        ],
        { cwd: p, env: w.env },
      );
      ok(imp);
      expect(imp.stdout).toContain('Imported into oci://');
      expect(w.tmpLeftovers()).toEqual([]);
      const index = await registryManifest(reg, 'airgap/acme/demo', '1.1.0');
      expect(index.status).toBe(200);
      // install from it, checked against the bundle's lock entries.
      const inst = w.project('bundle-install', {
        'main.tf': main(),
        '.terraform.lock.hcl': readFileSync(join(p, 'bundle.lock.hcl'), 'utf8'),
      });
      const cfg = tofurc(
        inst,
        `provider_installation {\n  oci_mirror {\n    repository_template = "${reg.host}/airgap/\${namespace}/\${type}"\n    include             = ["${origin.host}/*/*"]\n  }\n}\n`,
      );
      const r = await runCli(['install'], { cwd: inst, env: { ...w.env, TF_CLI_CONFIG_FILE: cfg } });
      ok(r);
      expect(
        existsSync(
          join(
            inst,
            `.terraform/providers/${origin.host}/acme/tools/0.3.0/linux_amd64/terraform-provider-tools_v0.3.0`,
          ),
        ),
      ).toBe(true);
      // One byte flipped in a package member: refused before anything is sent.
      const tar = readFileSync(join(p, 'providers.tar'));
      const zip = upstream(demo, '1.1.0', 'linux_amd64');
      const at = tar.indexOf(zip.subarray(0, 64));
      expect(at).toBeGreaterThan(0);
      tar[at + 100] = tar[at + 100]! ^ 0xff;
      writeFileSync(join(p, 'tampered.tar'), tar);
      const bad = await runCli(['bundle', 'import', 'tampered.tar', `oci://${reg.host}/tampered/{namespace}/{type}`], {
        cwd: p,
        env: w.env,
      });
      expect(bad.code).toBe(1);
      expect(flat(bad.stderr)).toContain('Error: Bundle refused');
      expect(flat(bad.stderr)).toContain('does not match the SHA-256 the manifest lists');
      expect((await registryRequest(reg, '/v2/tampered/acme/demo/tags/list', 'application/json')).status).toBe(404);
      expect(w.tmpLeftovers()).toEqual([]);
    }, 120_000);

    it('verify -mirror=oci://… checks a published mirror against a lock file', async () => {
      const p = w.project('verify', { 'main.tf': main() });
      const mirror = `oci://${reg.host}/verify/{namespace}/{type}`;
      ok(await runCli(['mirror', ...PLATFORMS.map((x) => `-platform=${x}`), mirror], { cwd: p, env: w.env }));
      ok(
        await runCli(['lock', ...PLATFORMS.map((x) => `-platform=${x}`), `-oci-mirror=${mirror}`], {
          cwd: p,
          env: w.env,
        }),
      );
      const good = await runCli(['verify', `-mirror=${mirror}`], { cwd: p, env: w.env });
      ok(good);
      expect(good.stdout).toContain(
        '.terraform.lock.hcl verified: 2 providers checked against 4 packages for darwin_arm64, linux_amd64; no problems.',
      );
      // Who vouches for each hash, in the one vocabulary (docs/json-ui.md verify_package): the bytes were
      // read from the registry's blobs, so every hash is at least computed from them, named by the blob's URL.
      const json = await runCli(['verify', '-json', `-mirror=${mirror}`], { cwd: p, env: w.env });
      ok(json);
      const checked = jsonLines(json.stdout).filter((m) => m['type'] === 'verify_package');
      expect(checked.map((m) => `${String(m['version'])} ${String(m['platform'])}`).sort()).toHaveLength(4);
      for (const m of checked) {
        expect(String(m['location'])).toContain(`${reg.host}/v2/verify/`);
        const hashes = m['hashes'] as { hash: string; dispositions: { kind: string; from?: string }[] }[];
        expect(hashes.map((h) => h.hash.slice(0, 3)).sort()).toEqual(['h1:', 'zh:']);
        for (const h of hashes) {
          const local = h.dispositions.find((d) => d.kind === 'computed-locally' || d.kind === 'verified-locally');
          expect(local?.from).toBe(m['location']);
        }
      }
      // A platform the mirror lacks, and a lock without darwin_arm64's hashes.
      const missing = await runCli(
        ['verify', `-mirror=${mirror}`, '-platform=linux_amd64', '-platform=windows_amd64'],
        { cwd: p, env: w.env },
      );
      expect(missing.code).toBe(1);
      expect(missing.stdout).toContain(
        `${origin.host}/acme/demo 1.1.0 windows_amd64: no package in the mirror for this platform`,
      );
      const lockText = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
      const darwin = await runCli(['verify', `-mirror=${mirror}`], {
        cwd: w.project('verify-partial', {
          'main.tf': main(),
          '.terraform.lock.hcl': lockText.replace(`"zh:${sha256(upstream(demo, '1.1.0', 'darwin_arm64'))}",\n`, ''),
        }),
        env: w.env,
      });
      expect(darwin.code).toBe(1);
      expect(darwin.stdout).toContain(
        `${origin.host}/acme/demo 1.1.0 darwin_arm64: the lock file records zh: hashes for this provider, but not this archive's`,
      );
      expect(w.tmpLeftovers()).toEqual([]);
    }, 120_000);

    it('-oci-mirror: a provider whose repository does not exist is "not found"; an invalid template is refused as tofu refuses it', async () => {
      const p = w.project('missing', { 'main.tf': main() });
      const r = await runCli(
        ['lock', '-platform=linux_amd64', `-oci-mirror=${reg.host}/nothing-here/{namespace}/{type}`],
        { cwd: p, env: w.env },
      );
      expect(r.code).toBe(1);
      expect(flat(r.stderr)).toContain(
        `provider ${origin.host}/acme/demo was not found in any of the search locations`,
      );
      expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
      const bad = await runCli(['lock', '-oci-mirror=example.com/{+type}'], { cwd: p, env: w.env });
      expect(bad.code).toBe(1);
      expect(flat(bad.stderr)).toContain(
        "The -oci-mirror argument is not a valid URI template: level 2 template expression operator '+' not allowed; only level 1 templates are supported.",
      );
      const both = await runCli(['lock', '-fs-mirror=x', `-oci-mirror=${reg.host}/a/{type}`], { cwd: p, env: w.env });
      expect(both.code).toBe(1);
      expect(flat(both.stderr)).toContain('The mirror command line options are mutually-exclusive.');
    }, 60_000);
  },
);

describe.skipIf(BIN === undefined || htpasswdBinary() === undefined)(
  `OCI mirrors with Basic authentication (htpasswd)${BIN === undefined || htpasswdBinary() === undefined ? ` (${SKIP_REASON})` : ''}`,
  () => {
    let secured: DockerRegistry;
    let wa: E2eWorkspace;
    let host2: ServerHost;
    let origin2: RemoteServer;
    let demo2: FakeProvider;
    const auth = { username: 'provkit', password: 's3cret-pass' };
    beforeAll(async () => {
      host2 = await startHost();
      demo2 = await makeProvider('acme', 'demo', ['1.1.0'], PLATFORMS);
      origin2 = await host2.registry({ providers: [demo2, await makeProvider('acme', 'tools', ['0.3.0'], PLATFORMS)] });
      secured = await startDockerRegistry({ auth });
      wa = workspaceTrusting(origin2.caPem, secured.caPem);
    }, 60_000);
    afterAll(async () => {
      await secured?.stop();
      await host2?.close();
      wa?.remove();
    });

    const main = (): string => requiresTf({ demo: `${origin2.host}/acme/demo`, tools: `${origin2.host}/acme/tools` });

    it('without credentials: publish and lock fail with the registry named; nothing written', async () => {
      const p = wa.project('anon', { 'main.tf': main() });
      const r = await runCli(['mirror', '-platform=linux_amd64', `oci://${secured.host}/${TEMPLATE}`], {
        cwd: p,
        env: wa.env,
      });
      expect(r.code).toBe(1);
      // One message for the cause, with its hint (src/installer/causes.ts).
      expect(flat(r.stderr)).toContain('Error: The OCI registry refused access');
      expect(flat(r.stderr)).toContain(`The OCI registry ${secured.host} answered HTTP 401`);
      expect(flat(r.stderr)).toContain('oci_credentials');
      expect(r.stderr).not.toMatch(/\n\s+at /);
      const l = await runCli(['lock', '-platform=linux_amd64', `-oci-mirror=${secured.host}/${TEMPLATE}`], {
        cwd: p,
        env: wa.env,
      });
      expect(l.code).toBe(1);
      expect(flat(l.stderr)).toContain(`The OCI registry ${secured.host} answered HTTP 401`);
      expect(existsSync(join(p, '.terraform.lock.hcl'))).toBe(false);
      expect(wa.tmpLeftovers()).toEqual([]);
    }, 60_000);

    it('credentials from a Docker config file (~/.docker/config.json auths): publish → lock → install', async () => {
      const home = join(wa.base, 'docker-home');
      mkdirSync(join(home, '.docker'), { recursive: true });
      writeFileSync(
        join(home, '.docker', 'config.json'),
        JSON.stringify({
          auths: { [secured.host]: { auth: Buffer.from(`${auth.username}:${auth.password}`).toString('base64') } },
        }),
      );
      const env = { ...wa.env, HOME: home };
      const p = wa.project('docker-config', { 'main.tf': main() });
      ok(
        await runCli(['mirror', ...PLATFORMS.map((x) => `-platform=${x}`), `oci://${secured.host}/${TEMPLATE}`], {
          cwd: p,
          env,
        }),
      );
      const index = await registryManifest(secured, 'providers/acme/demo', '1.1.0');
      expect(index.status).toBe(200);
      ok(
        await runCli(['lock', ...PLATFORMS.map((x) => `-platform=${x}`), `-oci-mirror=${secured.host}/${TEMPLATE}`], {
          cwd: p,
          env,
        }),
      );
      const hashes = lockHashes(readFileSync(join(p, '.terraform.lock.hcl'), 'utf8')).get(`${origin2.host}/acme/demo`)!;
      expect(hashes.filter((h) => h.startsWith('zh:'))).toEqual(
        PLATFORMS.map((pl) => `zh:${sha256(upstream(demo2, '1.1.0', pl))}`).sort(),
      );
      const cfg = tofurc(
        p,
        `provider_installation {\n  oci_mirror {\n    repository_template = "${secured.host}/providers/\${namespace}/\${type}"\n    include             = ["${origin2.host}/*/*"]\n  }\n}\n`,
      );
      const inst = await runCli(['install'], { cwd: p, env: { ...env, TF_CLI_CONFIG_FILE: cfg } });
      ok(inst);
      expect(
        existsSync(
          join(p, `.terraform/providers/${origin2.host}/acme/tools/0.3.0/linux_amd64/terraform-provider-tools_v0.3.0`),
        ),
      ).toBe(true);
      expect(wa.tmpLeftovers()).toEqual([]);
    }, 90_000);

    it('credentials from an oci_credentials block; a wrong password is refused', async () => {
      const p = wa.project('oci-credentials', { 'main.tf': main() });
      const cfg = (password: string): string =>
        tofurc(
          p,
          `oci_credentials "${secured.host}" {\n  username = "${auth.username}"\n  password = "${password}"\n}\nprovider_installation {\n  oci_mirror {\n    repository_template = "${secured.host}/providers/\${namespace}/\${type}"\n    include             = ["${origin2.host}/*/*"]\n  }\n}\n`,
        );
      const good = await runCli(['install'], { cwd: p, env: { ...wa.env, TF_CLI_CONFIG_FILE: cfg(auth.password) } });
      ok(good);
      const lock = readFileSync(join(p, '.terraform.lock.hcl'), 'utf8');
      const p2 = wa.project('oci-credentials-wrong', { 'main.tf': main() });
      const bad = await runCli(['install'], { cwd: p2, env: { ...wa.env, TF_CLI_CONFIG_FILE: cfg('wrong') } });
      expect(bad.code).toBe(1);
      expect(flat(bad.stderr)).toContain(`The OCI registry ${secured.host} answered HTTP 401`);
      expect(existsSync(join(p2, '.terraform'))).toBe(false);
      expect(lock).toContain('zh:');
      expect(wa.tmpLeftovers()).toEqual([]);
    }, 60_000);
  },
);
