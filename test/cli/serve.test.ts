// `provkit serve` as a child process on 127.0.0.1 with an ephemeral port:
// first stdout line, access log (human and -json), plain-HTTP rules,
// graceful stop on SIGTERM and SIGINT.
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MIRROR } from '../bundles/helpers.js';
import { startServe } from '../serve/child.js';
import { runCli } from '../support/e2e.js';

function fetchText(url: string): Promise<{ status: number; type: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    }).on('error', reject);
  });
}

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { cwd, env: { ...process.env, PROVKIT_FLAVOR: '' } });
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'provkit-serve-cli-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('provkit serve', () => {
  it('prints the URL first, logs requests, warns about plain HTTP, stops on SIGTERM', async () => {
    const s = await startServe(['-listen=127.0.0.1:0', MIRROR], dir);
    expect(s.firstLine).toBe(`Listening on ${s.url}`);
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const r = await fetchText(`${s.url}registry.example.test/acme/tools/index.json`);
    expect(r.status).toBe(200);
    expect(r.type).toBe('application/json');
    expect(r.body).toBe('{\n  "versions": {\n    "0.3.0": {}\n  }\n}');
    expect((await fetchText(`${s.url}registry.example.test/acme/tools/..%2F..%2F..%2Fhashes.json`)).status).toBe(404);
    expect(await s.stop()).toBe(0);
    expect(s.stdout()).toMatch(
      /127\.0\.0\.1 - - \[.+\] "GET \/registry\.example\.test\/acme\/tools\/index\.json" 200 39 /,
    );
    expect(s.stdout()).toContain('Stopped (SIGTERM).');
    expect(s.stderr()).toContain('Serving plain HTTP');
  });

  it('-json: a listening message first, access lines as JSON; stops on SIGINT too', async () => {
    const s = await startServe(['-json', '-listen=127.0.0.1:0', MIRROR], dir);
    const first = JSON.parse(s.firstLine) as { type: string; url: string };
    expect(first.type).toBe('listening');
    expect(first.url).toBe(s.url);
    // Issue 14 -json: the stream starts with the version message.
    expect(JSON.parse(s.stdout().split('\n')[0]!)).toMatchObject({ type: 'version', ui: '1.0' });
    await fetchText(`${s.url}registry.example.test/acme/demo/1.1.0.json`);
    expect(await s.stop('SIGINT')).toBe(0);
    const access = s
      .stdout()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; status?: number; path?: string })
      .find((l) => l.type === 'access');
    expect(access).toMatchObject({ status: 200, path: '/registry.example.test/acme/demo/1.1.0.json' });
    expect(s.stdout()).toContain('"signal":"SIGINT"');
  });

  it('its help, and the command list, name the pull-through forms and their flags', async () => {
    const help = await run(['serve', '-help'], dir);
    expect(help.code).toBe(0);
    for (const line of ['serve -upstream [options] STORE', 'serve -offline [options] STORE'])
      expect(help.stdout).toContain(line);
    for (const flag of [
      '-upstream',
      '-offline',
      '-allow=',
      '-allow-address=',
      '-allow-unsigned',
      '-trusted-key=',
      '-versions-ttl=',
    ])
      expect(help.stdout).toMatch(new RegExp(`^  ${flag}`, 'm'));
    expect(help.stdout).toContain('provkit.hcl');
    expect((await run(['-help'], dir)).stdout).toMatch(/serve .*-upstream/s);
    expect((await run(['serve'], dir)).stderr).toContain('serve -upstream STORE');
  });

  it.each([
    [['-listen=0.0.0.0:0', MIRROR], 'Plain HTTP refused'],
    // The pull-through mirror too: TLS off loopback.
    [['-upstream', '-listen=0.0.0.0:0', 'pull-through-store'], 'Plain HTTP refused'],
    [['-offline', '-listen=[::]:0', 'pull-through-store'], 'Plain HTTP refused'],
    [['-listen=127.0.0.1:0', '-tls-cert=x.pem', MIRROR], 'Incomplete TLS options'],
    [['-listen=127.0.0.1:0', 'missing-dir'], 'Not a directory'],
    [['-listen=nonsense', MIRROR], 'Invalid -listen address'],
    [[], 'Wrong number of arguments'],
  ])('%j fails with %s', async (args, message) => {
    const r = await run(['serve', ...args], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(existsSync(join(dir, 'pull-through-store'))).toBe(false);
  });
});
