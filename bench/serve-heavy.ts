// Serves the commands benchmark's heavy provider (bench/generate.ts packages)
// from the in-repo fake registry until killed, for profiling by hand:
//   npx tsx bench/serve-heavy.ts   → prints {"host": …, "caPath": …} on stdout
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';

import { startFakeRegistry } from '../test/support/servers/registry.js';
import { ensureBenchPackages } from './generate.js';

const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];
const { paths } = await ensureBenchPackages();
const zips = new Map<string, Buffer>();
for (const p of paths) {
  const m = /_1\.0\.0_(\w+_\w+)\.zip$/.exec(basename(p));
  if (m?.[1]) zips.set(m[1], await readFile(p));
}
const reg = await startFakeRegistry({
  lifetimeMs: 24 * 3600_000,
  providers: [{ namespace: 'acme', type: 'heavy', versions: [{ version: '1.0.0', packages: PLATFORMS.map((platform) => ({ platform, zip: zips.get(platform)! })) }] }],
});
console.log(JSON.stringify({ host: reg.host, caPath: reg.caPath }));
setInterval(() => undefined, 1 << 30);
process.on('SIGTERM', () => void reg.close().then(() => process.exit(0)));
