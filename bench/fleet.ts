// The fleet benchmark: 20 `terraform init` at once, straight to an origin
// registry that is far away, and through a pull-through mirror
// (`provkit serve -upstream`, docs/fleet-mirror.md) that is near, cold (an
// empty store) and warm (the store filled by the cold run).
//
// The origin: the in-repo fake registry (signed SHA256SUMS, in the test
// server host process) serving 2 providers for linux_amd64, one zip each of
// `--mb` MB (default 4) of incompressible bytes, reached only through
// bench/wan-proxy.ts (a TCP proxy in a child process: RTT 60 ms, 12 MB/s per
// connection), with relative download URLs so that archives cross it too.
// terraform reaches the origin through a `host` block; the mirror reads the
// same block. The clients reach the mirror over loopback (the LAN).
//
// Columns: wall time of the 20 inits; bytes the proxy carried from the origin;
// archive requests the origin answered; exits. Every lock file's h1: must equal
// the direct run's (a difference fails the run).
//
// Usage: npm run build && npx tsx bench/fleet.ts [--mb N] [--clients N]
// Writes bench/results-fleet.md (its table; bench/results-fleet.md as committed
// holds two runs and a reading of them). Skipped without terraform; needs 1.11.4.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { startServe, type ServeChild } from '../test/serve/child.js';
import { startHost } from '../test/support/remote/index.js';
import type { FakeProvider } from '../test/support/servers/packages.js';
import { testTls } from '../test/support/servers/tls.js';
import { buildZip } from '../test/support/zip-writer.js';
import { forkWanProxy } from './wan-proxy.js';

const OUT = fileURLToPath(new URL('./results-fleet.md', import.meta.url));
const { values } = parseArgs({
  options: { mb: { type: 'string', default: '4' }, clients: { type: 'string', default: '20' } },
});
const MB = Number(values.mb);
const CLIENTS = Number(values.clients);
const TYPES = ['alpha', 'beta'];
const CONFIG = `terraform {\n  required_providers {\n${TYPES.map((t) => `    ${t} = { source = "registry.example.test/acme/${t}" }`).join('\n')}\n  }\n}\n`;

/** `n` deterministic incompressible bytes (SHA-256 in counter mode). */
function noise(seed: string, n: number): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0, off = 0; off < n; i++, off += 32)
    createHash('sha256')
      .update(`${seed}:${String(i)}`)
      .digest()
      .copy(out, off);
  return out;
}

async function providers(): Promise<FakeProvider[]> {
  return Promise.all(
    TYPES.map(async (type) => ({
      namespace: 'acme',
      type,
      versions: [
        {
          version: '1.0.0',
          packages: [
            {
              platform: 'linux_amd64',
              zip: await buildZip([
                { name: `terraform-provider-${type}_v1.0.0`, data: noise(type, MB * 1e6), unixMode: 0o100755 },
              ]),
            },
          ],
        },
      ],
    })),
  );
}

function terraformInit(dir: string, env: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('terraform', ['init', '-backend=false', '-input=false', '-no-color'], {
      cwd: dir,
      env,
      stdio: 'ignore',
    });
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
}

interface Row {
  name: string;
  wallS: number;
  originBytes: number;
  originArchiveRequests: number;
  exits: string;
}

async function main(): Promise<void> {
  const version = spawnSync('terraform', ['version'], { encoding: 'utf8' }).stdout?.split('\n')[0] ?? '';
  if (version === '') {
    console.log('bench/fleet.ts: skipped, terraform is not on PATH');
    return;
  }
  if (version !== 'Terraform v1.11.4')
    throw new Error(`terraform 1.11.4 expected on PATH, found ${JSON.stringify(version)}`);
  const tls = await testTls();
  const host = await startHost();
  const base = mkdtempSync(join(tmpdir(), 'provkit-bench-fleet-'));
  const mirrors: ServeChild[] = [];
  try {
    const origin = await host.registry({ providers: await providers(), urlStyle: 'root-relative' });
    const wan = await forkWanProxy([{ name: 'origin', upstreamPort: origin.port }], {
      rttMs: 60,
      perConnectionBytesPerSecond: 12e6,
    });
    const far = `https://127.0.0.1:${String(wan.ports['origin'])}`;
    writeFileSync(join(base, 'cert.pem'), tls.certPem);
    writeFileSync(join(base, 'key.pem'), tls.keyPem);
    writeFileSync(join(base, 'cas.pem'), `${origin.caPem}${tls.caPem}`);
    writeFileSync(
      join(base, 'origin.tfrc'),
      `host "registry.example.test" {\n  services = {\n    "providers.v1" = "${far}/v1/providers/"\n  }\n}\n`,
    );
    const mirror = await startServe(
      [
        '-upstream',
        '-allow=registry.example.test',
        '-allow-address=127.0.0.1',
        '-listen=127.0.0.1:0',
        `-tls-cert=${join(base, 'cert.pem')}`,
        `-tls-key=${join(base, 'key.pem')}`,
        join(base, 'store'),
      ],
      base,
      {
        SSL_CERT_FILE: join(base, 'cas.pem'),
        TF_CLI_CONFIG_FILE: join(base, 'origin.tfrc'),
        PROVKIT_CACHE_DIR: join(base, 'cache'),
        HOME: base,
      },
    );
    mirrors.push(mirror);
    writeFileSync(
      join(base, 'mirror.tfrc'),
      `provider_installation {\n  network_mirror {\n    url = "${mirror.url}"\n  }\n}\n`,
    );

    const rows: Row[] = [];
    let reference: string | undefined;
    const h1Of = (lock: string): string =>
      [...lock.matchAll(/"(h1:[^"]+)"/g)]
        .map((m) => m[1])
        .sort()
        .join(' ');
    const run = async (name: string, rc: string, ca: string): Promise<void> => {
      await wan.reset();
      await origin.mark();
      const dirs = Array.from({ length: CLIENTS }, (_, i) => {
        const d = join(base, name, String(i));
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'main.tf'), CONFIG);
        return d;
      });
      const env = {
        PATH: process.env['PATH'] ?? '',
        HOME: base,
        SSL_CERT_FILE: ca,
        TF_CLI_CONFIG_FILE: rc,
        CHECKPOINT_DISABLE: '1',
      };
      const t0 = performance.now();
      const exits = await Promise.all(dirs.map((d) => terraformInit(d, env)));
      const wallS = (performance.now() - t0) / 1000;
      const stats = await wan.stats();
      const log = await origin.log();
      for (const d of dirs) {
        const h1 = h1Of(readFileSync(join(d, '.terraform.lock.hcl'), 'utf8'));
        reference ??= h1;
        if (h1 !== reference) throw new Error(`${name}: a lock file's h1: differ from the direct run's`);
      }
      const ok = exits.filter((e) => e === 0).length;
      rows.push({
        name,
        wallS,
        originBytes: stats.connections.reduce((s, c) => s + c.bytesDown, 0),
        originArchiveRequests: log.filter((r) => r.pathname.endsWith('.zip')).length,
        exits: `${String(ok)}/${String(CLIENTS)} ok`,
      });
      console.log(rows.at(-1));
    };
    await run('direct', join(base, 'origin.tfrc'), origin.caPath);
    await run('mirror-cold', join(base, 'mirror.tfrc'), tls.caPath);
    await run('mirror-warm', join(base, 'mirror.tfrc'), tls.caPath);
    await wan.close();

    const direct = rows[0]!;
    const lines = [
      '# Fleet benchmark (bench/fleet.ts)',
      '',
      `${String(CLIENTS)} parallel \`terraform init\` (${version}), 2 providers × ${String(MB)} MB (linux_amd64), origin behind`,
      'bench/wan-proxy.ts at RTT 60 ms, 12 MB/s per connection; the mirror on loopback.',
      `Machine: ${String(availableParallelism())} cores (${cpus()[0]?.model ?? '?'}), shared with other work while measured.`,
      '',
      `Command: \`npm run build && npx tsx bench/fleet.ts --mb ${String(MB)} --clients ${String(CLIENTS)}\``,
      '',
      '| run | wall (s) | vs direct | bytes from the origin | archive requests at the origin | exits |',
      '| --- | ---: | ---: | ---: | ---: | --- |',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${r.wallS.toFixed(2)} | ${(direct.wallS / r.wallS).toFixed(1)}× | ${(r.originBytes / 1e6).toFixed(1)} MB | ${String(r.originArchiveRequests)} | ${r.exits} |`,
      ),
      '',
    ];
    writeFileSync(OUT, lines.join('\n'));
    console.log(lines.join('\n'));
  } finally {
    await Promise.all(mirrors.map((m) => m.stop()));
    await host.close();
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
