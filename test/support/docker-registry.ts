/**
 * A real OCI registry for end-to-end tests: Debian's `docker-registry` (the
 * CNCF distribution registry 2.8.x; `apt-get install docker-registry`), run
 * from a generated `config.yml` on 127.0.0.1 with TLS from the test CA
 * (`./servers/tls.ts`), storage in a temporary directory, and optionally
 * htpasswd Basic authentication (bcrypt entries made with `htpasswd -Bbn`,
 * from apache2-utils).
 *
 * The registry runs in its own process under a small `sh` that kills it
 * (SIGTERM) as soon as its standard input closes: `stop()` closes it and
 * waits, then SIGKILLs what is left; if the test process dies, the pipe
 * closes too, so no registry outlives the suite. `stop()` removes the
 * temporary directory.
 *
 * Behaviour of that registry worth knowing (observed with 2.8.2): a manifest
 * request whose `Accept` lacks the OCI index type gets 404 for an index; the
 * tag list ignores `n`; there is no referrers endpoint.
 *
 * ```ts
 * const bin = dockerRegistryBinary();
 * describe.skipIf(bin === undefined)('…', () => {
 *   let reg: DockerRegistry;
 *   beforeAll(async () => { reg = await startDockerRegistry({ auth: { username: 'u', password: 'p' } }); });
 *   afterAll(() => reg.stop());
 * });
 * ```
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

import { testTls } from './servers/tls.js';

/** The `docker-registry` executable on PATH, or undefined when it is not installed. */
export function dockerRegistryBinary(): string | undefined {
  return which('docker-registry');
}

/** The `htpasswd` executable on PATH (apache2-utils), or undefined. */
export function htpasswdBinary(): string | undefined {
  return which('htpasswd');
}

function which(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '/usr/bin:/bin').split(delimiter)) {
    const p = join(dir, name);
    if (dir !== '' && existsSync(p)) return p;
  }
  return undefined;
}

/** Why OCI tests are skipped, for the test name. */
export const SKIP_REASON =
  'skipped: docker-registry is not installed (apt-get install docker-registry apache2-utils; see README "OCI tests")';

export interface DockerRegistry {
  /** `127.0.0.1:PORT`, the registry part of repository addresses. */
  readonly host: string;
  readonly port: number;
  /** `https://127.0.0.1:PORT`. */
  readonly origin: string;
  /** The test CA (for SSL_CERT_FILE). */
  readonly caPath: string;
  readonly caPem: string;
  /** Where the registry stores blobs (`STORAGE/docker/registry/v2/…`). */
  readonly storage: string;
  readonly auth?: { readonly username: string; readonly password: string };
  /** The registry's log so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

export interface DockerRegistryOptions {
  /** htpasswd Basic authentication with this one user. */
  readonly auth?: { readonly username: string; readonly password: string };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** One `GET /v2/` (with the CA); the status, or undefined when nothing answers yet. */
function probe(origin: string, ca: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(`${origin}/v2/`, { ca, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
    req.end();
  });
}

/** Starts a registry (see the module comment). */
export async function startDockerRegistry(options: DockerRegistryOptions = {}): Promise<DockerRegistry> {
  const bin = dockerRegistryBinary();
  if (bin === undefined) throw new Error(SKIP_REASON);
  const tls = await testTls();
  const dir = mkdtempSync(join(tmpdir(), 'provkit-docker-registry-'));
  const storage = join(dir, 'storage');
  writeFileSync(join(dir, 'cert.pem'), tls.certPem);
  writeFileSync(join(dir, 'key.pem'), tls.keyPem, { mode: 0o600 });
  let authBlock = '';
  if (options.auth) {
    const htpasswd = htpasswdBinary();
    if (htpasswd === undefined) throw new Error('htpasswd is not installed (apt-get install apache2-utils)');
    const line = execFileSync(htpasswd, ['-Bbn', options.auth.username, options.auth.password], {
      encoding: 'utf8',
    }).trim();
    writeFileSync(join(dir, 'htpasswd'), `${line}\n`);
    authBlock = `auth:\n  htpasswd:\n    realm: provkit-test\n    path: ${join(dir, 'htpasswd')}\n`;
  }
  const logFile = join(dir, 'registry.log');
  // A port can be taken between freePort and the registry's bind: try a few.
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const origin = `https://127.0.0.1:${port}`;
    writeFileSync(
      join(dir, 'config.yml'),
      [
        'version: 0.1',
        'log:',
        '  level: info',
        '  accesslog:',
        '    disabled: false',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${storage}`,
        '  delete:',
        '    enabled: true',
        'http:',
        `  addr: 127.0.0.1:${port}`,
        '  secret: provkit-test-secret',
        '  tls:',
        `    certificate: ${join(dir, 'cert.pem')}`,
        `    key: ${join(dir, 'key.pem')}`,
        authBlock,
      ].join('\n'),
    );
    // `sh` reports the registry's pid, then kills it (TERM) when its stdin closes.
    const child: ChildProcess = spawn(
      'sh',
      [
        '-c',
        '"$1" serve "$2" >"$3" 2>&1 & pid=$!; echo $pid; read _ignored; { kill -TERM $pid; wait $pid; } 2>/dev/null',
        'sh',
        bin,
        join(dir, 'config.yml'),
        logFile,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const registryPid = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /^(\d+)\n/.exec(out);
        if (m) resolve(Number(m[1]));
      });
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`docker-registry wrapper exited with ${String(code)}`)));
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const readLog = (): string => {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    };
    const stop = async (): Promise<void> => {
      child.stdin?.end();
      const timer = setTimeout(() => {
        try {
          process.kill(registryPid, 'SIGKILL');
        } catch {
          // already gone
        }
        child.kill('SIGKILL');
      }, 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    };
    // Until it answers /v2/ (200, or 401 with auth), at most ~10 s.
    let status: number | undefined;
    for (let i = 0; i < 100 && status === undefined; i++) {
      status = await probe(origin, tls.caPem);
      if (status === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    if (status === 200 || status === 401) {
      return {
        host: `127.0.0.1:${port}`,
        port,
        origin,
        caPath: tls.caPath,
        caPem: tls.caPem,
        storage,
        ...(options.auth ? { auth: options.auth } : {}),
        log: readLog,
        stop,
      };
    }
    const text = readLog();
    child.stdin?.end();
    await exited;
    if (!/address already in use/i.test(text)) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`docker-registry did not start (status ${String(status)}):\n${text}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error('docker-registry did not start: no free port');
}

/** A plain HTTPS request to the registry (for checking what a test published); Basic auth when the registry has it. */
export function registryRequest(
  reg: DockerRegistry,
  path: string,
  accept = '*/*',
  method: 'GET' | 'HEAD' = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept };
    if (reg.auth)
      headers['authorization'] = `Basic ${Buffer.from(`${reg.auth.username}:${reg.auth.password}`).toString('base64')}`;
    const req = request(`${reg.origin}${path}`, { ca: reg.caPem, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The JSON of a manifest (by tag or digest) and its digest, as the registry serves it. */
export async function registryManifest(
  reg: DockerRegistry,
  repository: string,
  reference: string,
): Promise<{ status: number; digest: string; doc: Record<string, unknown>; body: Buffer }> {
  const r = await registryRequest(
    reg,
    `/v2/${repository}/manifests/${reference}`,
    'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json',
  );
  const digest = String(r.headers['docker-content-digest'] ?? '');
  let doc: Record<string, unknown> = {};
  try {
    doc = JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;
  } catch {
    doc = {};
  }
  return { status: r.status, digest, doc, body: r.body };
}
