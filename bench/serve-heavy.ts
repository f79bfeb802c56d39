// The commands benchmark's heavy provider (5 platforms × ~100 MB zips, the
// packages of bench/generate.ts) on the in-repo fake registry (HTTPS on
// 127.0.0.1, signed SHA256SUMS). bench/commands.ts starts it in-process; run
// directly, it serves until killed, for profiling by hand:
//   npx tsx bench/serve-heavy.ts   → prints {"host": …, "caPath": …} on stdout
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

import { startFakeRegistry, type FakeRegistry } from '../test/support/servers/registry.js';
import { ensureBenchPackages, type GenerateOptions } from './generate.js';

export const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];

/** Serves `acme/heavy` 1.0.0 for {@link PLATFORMS}; also returns the zips' paths. */
export async function startHeavyRegistry(
  lifetimeMs?: number,
  generate: GenerateOptions = {},
): Promise<{ reg: FakeRegistry; paths: string[] }> {
  const { paths } = await ensureBenchPackages(generate);
  const zips = new Map<string, Buffer>();
  for (const p of paths) {
    const m = /_1\.0\.0_(\w+_\w+)\.zip$/.exec(basename(p));
    if (m?.[1]) zips.set(m[1], await readFile(p));
  }
  const reg = await startFakeRegistry({
    ...(lifetimeMs === undefined ? {} : { lifetimeMs }),
    providers: [
      {
        namespace: 'acme',
        type: 'heavy',
        versions: [
          { version: '1.0.0', packages: PLATFORMS.map((platform) => ({ platform, zip: zips.get(platform)! })) },
        ],
      },
    ],
  });
  return { reg, paths };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { reg } = await startHeavyRegistry(24 * 3600_000);
  console.log(JSON.stringify({ host: reg.host, caPath: reg.caPath }));
  setInterval(() => undefined, 1 << 30);
  process.on('SIGTERM', () => void reg.close().then(() => process.exit(0)));
}
