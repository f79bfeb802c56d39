// The pull-through mirror's fault matrix at the process boundary, generated:
// every origin URL kind (versions, download metadata, SHA256SUMS, signature,
// archive) × every origin fault (down, slow, truncated, 5xx), plus the faults
// of one kind (a wrong archive hash, a bad signature, a key the registry does
// not list, a redirect to a host nobody allowed). The service runs as a child
// process; the origin in the server host; each cell has a provider of its own,
// so all cells run at once against one origin and one service.
//
// Each cell, while its fault lasts: the client gets a clear error status (403
// refused, 502 the origin failed, 504 it did not answer in time) with one
// line of text naming the cause and its code in `X-Provkit-Error`; the store
// keeps nothing of the provider and nothing partial. Once the faults are
// cleared, the next request fetches again and succeeds, and the package is
// stored.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startServe, type ServeChild } from '../serve/child.js';
import {
  httpsGet,
  type HttpsAnswer,
  mirrorEnv,
  type MirrorFiles,
  upstreamArgs,
  writeMirrorFiles,
} from '../support/pull-through.js';
import { startHost, type RemoteFault, type RemoteServer, type ServerHost } from '../support/remote/index.js';
import { type FakeProvider, makeProvider } from '../support/servers/packages.js';
import { testTls, type TestTls } from '../support/servers/tls.js';
import { buildZip } from '../support/zip-writer.js';

const HOST = 'registry.example.test';
const NS = 'acme';
const V = '1.0.0';
const PLAT = 'linux_amd64';

type Kind = 'versions' | 'download' | 'shasums' | 'signature' | 'archive';
const KINDS: Kind[] = ['versions', 'download', 'shasums', 'signature', 'archive'];

interface Cell {
  readonly name: string;
  readonly kind: Kind;
  /** Arms the fault on the origin for provider `type`. */
  arm(type: string): Promise<void>;
  readonly status: number;
  readonly code: RegExp;
}

const path = (kind: Kind, type: string): Promise<string> =>
  kind === 'versions'
    ? origin.path('versions', NS, type)
    : kind === 'download'
      ? origin.path('download', NS, type, V, PLAT)
      : kind === 'archive'
        ? origin.path('archive', NS, type, V, PLAT)
        : origin.path(kind, NS, type, V);
const on = (kind: Kind): 'main' | 'archives' => (kind === 'versions' || kind === 'download' ? 'main' : 'archives');

const NETWORK: Array<{ name: string; fault: RemoteFault; status: number; code: RegExp }> = [
  { name: 'down (connection reset)', fault: { kind: 'reset' }, status: 502, code: /^NET_CONNECTION$/ },
  { name: 'slow (no answer)', fault: { kind: 'stall', phase: 'headers' }, status: 504, code: /^NET_TIMEOUT$/ },
  { name: 'truncated', fault: { kind: 'drop' }, status: 502, code: /^NET_/ },
  { name: '5xx', fault: { kind: 'status', status: 500 }, status: 502, code: /^NET_HTTP_STATUS$/ },
];

const CELLS: Cell[] = [
  ...KINDS.flatMap((kind) =>
    NETWORK.map((f) => ({
      name: `${kind}: ${f.name}`,
      kind,
      arm: async (type: string) => origin.setFault(await path(kind, type), f.fault, on(kind)),
      status: f.status,
      code: f.code,
    })),
  ),
  {
    name: 'archive: wrong hash (bytes differ from the signed SHA256SUMS)',
    kind: 'archive',
    arm: async (type) => void (await origin.call('tamperArchive', NS, type, V, PLAT)),
    status: 502,
    code: /^CHECKSUM_MISMATCH$/,
  },
  {
    name: 'signature: does not verify',
    kind: 'signature',
    arm: async (type) => void (await origin.call('badSignature', NS, type, V)),
    status: 502,
    code: /^SIGNATURE_/,
  },
  {
    name: 'signature: by a key the registry does not list',
    kind: 'signature',
    arm: async (type) => void (await origin.call('unlistedKey', NS, type, V)),
    status: 502,
    code: /^SIGNATURE_/,
  },
  ...(['download', 'archive'] as const).map((kind) => ({
    name: `${kind}: redirect to a host nobody allowed`,
    kind,
    arm: async (type: string) =>
      origin.setFault(
        await path(kind, type),
        { kind: 'redirect', location: 'https://169.254.169.254/latest/meta-data/x.zip' },
        on(kind),
      ),
    status: 403,
    code: /^NET_REFUSED$/,
  })),
  {
    name: 'archive: redirect to a loopback address nobody named',
    kind: 'archive',
    arm: async (type) =>
      origin.setFault(
        await path('archive', type),
        { kind: 'redirect', location: 'https://127.0.0.2:9/x.zip' },
        'archives',
      ),
    status: 403,
    code: /^NET_REFUSED$/,
  },
];

let tls: TestTls;
let host: ServerHost;
let origin: RemoteServer;
let base: string;
let storeDir: string;
let mirror: ServeChild;
let files: MirrorFiles;

const typeOf = (i: number): string => `f${String(i)}`;

/** A provider whose archive (256 KB, incompressible) is larger than the file size the full-disk service may write. */
async function bigProvider(): Promise<FakeProvider> {
  const data = Buffer.alloc(256 * 1024);
  for (let i = 0; i * 32 < data.length; i++)
    createHash('sha256')
      .update(`big:${String(i)}`)
      .digest()
      .copy(data, i * 32);
  const zip = await buildZip([{ name: 'terraform-provider-big_v1.0.0', data, unixMode: 0o100755 }]);
  return { namespace: NS, type: 'big', versions: [{ version: V, packages: [{ platform: PLAT, zip }] }] };
}
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

const get = (url: string): Promise<HttpsAnswer> => httpsGet(url, tls.caPem);

/** What a cell asks the mirror for: the version list for a versions fault, else the archive. */
const urlOf = (cell: Cell, type: string): string =>
  cell.kind === 'versions'
    ? `${mirror.url}${HOST}/${NS}/${type}/index.json`
    : `${mirror.url}${HOST}/${NS}/${type}/terraform-provider-${type}_${V}_${PLAT}.zip`;

/** Everything the store holds for provider `type` (none when its directory does not exist). */
const storedOf = (type: string): string[] => {
  const dir = join(storeDir, HOST, NS, type);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

beforeAll(async () => {
  tls = await testTls();
  host = await startHost();
  origin = await host.registry({
    providers: [
      ...(await Promise.all(CELLS.map((_, i) => makeProvider(NS, typeOf(i), [V], [PLAT])))),
      await bigProvider(),
    ],
    archiveHost: 'separate',
  });
  base = mkdtempSync(join(tmpdir(), 'provkit-pull-through-faults-'));
  storeDir = join(base, 'store');
  files = writeMirrorFiles(base, tls, origin);
  mirror = await startServe(upstreamArgs(files, storeDir, [`-allow=${HOST}`]), base, {
    ...mirrorEnv(files, base, join(base, 'cache')),
    PROVKIT_HASH_STORE: 'off',
    // Short timeouts and one retry: a stalled origin is said in a few seconds, a loaded machine still answers in time.
    PROVKIT_HTTP_TUNING: 'connect=2000,idle=2000,retries=1,backoff=50',
  });
}, 60_000);

afterAll(async () => {
  await mirror?.stop();
  await host?.close();
  if (base) rmSync(base, { recursive: true, force: true });
});

describe('serve -upstream: the origin fault matrix', () => {
  it(`${String(CELLS.length)} cells: a clear error and nothing stored while the fault lasts, then fetched again and stored`, async () => {
    await Promise.all(CELLS.map((cell, i) => cell.arm(typeOf(i))));
    const during = await Promise.all(CELLS.map((cell, i) => get(urlOf(cell, typeOf(i)))));
    const problems: string[] = [];
    for (const [i, cell] of CELLS.entries()) {
      const r = during[i]!;
      const text = r.body.toString('utf8');
      const code = [r.headers['x-provkit-error'] ?? ''].flat().join(',');
      if (r.status !== cell.status || !cell.code.test(code))
        problems.push(`${cell.name}: ${String(r.status)} ${code} ${JSON.stringify(text)}`);
      // One line, naming the cause; no stack trace, no raw errno text.
      if (text.split('\n').length !== 2 || /\n\s+at |ECONNRESET|errno/i.test(text))
        problems.push(`${cell.name}: body ${JSON.stringify(text)}`);
      if (storedOf(typeOf(i)).length !== 0) problems.push(`${cell.name}: stored ${storedOf(typeOf(i)).join(', ')}`);
    }
    expect(problems).toEqual([]);
    expect(readdirSync(storeDir).filter((n) => n.startsWith('.provkit-fetch-'))).toEqual([]);

    await origin.clearFaults();
    const after = await Promise.all(CELLS.map((cell, i) => get(urlOf(cell, typeOf(i)))));
    for (const [i, cell] of CELLS.entries()) {
      expect(after[i]!.status, `${cell.name} ${after[i]!.body.toString()}`).toBe(200);
      if (cell.kind !== 'versions') {
        expect(sha256(after[i]!.body), cell.name).toBe(await origin.call('sha256', NS, typeOf(i), V, PLAT));
        expect(storedOf(typeOf(i)), cell.name).toContain(`terraform-provider-${typeOf(i)}_${V}_${PLAT}.zip`);
      }
    }
  });
});

// A full disk, at the process boundary: the service runs under a file-size
// limit (`prlimit --fsize`, util-linux; no privilege needed, the soft limit
// is lowered and raised back within the hard one), so writing the archive
// fails with EFBIG as a full file system fails a write with ENOSPC.
const PRLIMIT = spawnSync('prlimit', ['--version']).status === 0;

describe.skipIf(!PRLIMIT)(
  `serve -upstream: a store that cannot write${PRLIMIT ? '' : ' (prlimit not installed)'}`,
  () => {
    it('is an error per request (503), stores nothing partial, and the next request after space returns succeeds', async () => {
      const store = join(base, 'full-store');
      const full = await startServe(
        upstreamArgs(files, store, [`-allow=${HOST}`]),
        base,
        { ...mirrorEnv(files, base, join(base, 'full-cache')), PROVKIT_HASH_STORE: 'off' },
        ['prlimit', '--fsize=65536:unlimited', '--'],
      );
      try {
        const url = `${full.url}${HOST}/${NS}/big/terraform-provider-big_${V}_${PLAT}.zip`;
        const refused = await get(url);
        expect(refused.status).toBe(503);
        expect(refused.body.toString()).toMatch(/^the mirror could not store the package: .*file too large/);
        expect(refused.body.toString().split('\n')).toHaveLength(2);
        expect(existsSync(join(store, HOST, NS, 'big'))).toBe(false);
        expect(readdirSync(store).filter((n) => n.startsWith('.provkit-fetch-'))).toEqual([]);
        // Space again: the same service, the same request.
        expect(spawnSync('prlimit', [`--pid=${String(full.pid)}`, '--fsize=unlimited:unlimited']).status).toBe(0);
        const after = await get(url);
        expect(after.status).toBe(200);
        expect(sha256(after.body)).toBe(await origin.call('sha256', NS, 'big', V, PLAT));
        expect(readdirSync(join(store, HOST, NS, 'big'))).toContain(`terraform-provider-big_${V}_${PLAT}.zip`);
      } finally {
        await full.stop();
      }
      expect(full.stderr()).toMatch(/file too large/);
    });
  },
);
