// What `provkit mirror oci://…` publishes, as a registry serves it (issue 16,
// docs/oci.md "The layout"): starts Debian's docker-registry as the tests do
// (test/support/docker-registry.ts: TLS on 127.0.0.1, a test CA), publishes
// mirror-fixtures/ (registry.example.test/acme/demo 1.1.0 and acme/tools
// 0.3.0 for linux_amd64 and darwin_arm64), then prints, with the curl command
// of each, the tag list, the index of demo 1.1.0 and its platform manifests;
// publishes again and shows the tag's digest unchanged. Stops the registry.
//
// Usage: npm run build && npx tsx scripts/oci-manifests.ts   (needs docker-registry and curl)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { dockerRegistryBinary, startDockerRegistry } from '../test/support/docker-registry.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

async function main(): Promise<number> {
  if (dockerRegistryBinary() === undefined) {
    console.error('scripts/oci-manifests.ts: docker-registry is not installed (apt-get install docker-registry)');
    return 1;
  }
  const reg = await startDockerRegistry();
  const scratch = mkdtempSync(join(tmpdir(), 'provkit-oci-manifests-'));
  try {
    writeFileSync(join(scratch, 'empty.tfrc'), '');
    const env = {
      ...process.env,
      SSL_CERT_FILE: reg.caPath,
      TF_CLI_CONFIG_FILE: join(scratch, 'empty.tfrc'),
      PROVKIT_HASH_STORE: 'off',
      PROVKIT_CACHE_DIR: join(scratch, 'cache'),
    };
    const target = `oci://${reg.host}/providers/{namespace}/{type}`;
    const args = [
      '-chdir=mirror-fixtures/config',
      'mirror',
      '-fs-mirror=..',
      '-platform=linux_amd64',
      '-platform=darwin_arm64',
      target,
    ];
    const publish = (): void => {
      console.log(`$ provkit ${args.map((a) => (a.includes('{') ? `'${a}'` : a)).join(' ')}`);
      console.log(
        execFileSync(process.execPath, [join(ROOT, 'bin/provkit.js'), ...args], { cwd: ROOT, env, encoding: 'utf8' }),
      );
    };
    const curl = (accept: string, path: string, head = false): string => {
      const argv = [
        '-sS',
        head ? '-I' : '-i',
        '--cacert',
        reg.caPath,
        '-H',
        `Accept: ${accept}`,
        `${reg.origin}${path}`,
      ];
      console.log(
        `$ curl ${argv.map((a) => (a === reg.caPath ? 'ca.pem' : a.includes(' ') ? `'${a}'` : a)).join(' ')}`,
      );
      const out = execFileSync('curl', argv, { encoding: 'utf8' });
      console.log(out.replace(/\r\n/g, '\n').replace(/^date: .*\n/im, ''));
      return out;
    };
    publish();
    const INDEX = 'application/vnd.oci.image.index.v1+json';
    const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
    curl('application/json', '/v2/providers/acme/demo/tags/list');
    const index = curl(INDEX, '/v2/providers/acme/demo/manifests/1.1.0');
    const body = JSON.parse(index.slice(index.indexOf('\r\n\r\n') + 4)) as { manifests: Array<{ digest: string }> };
    for (const m of body.manifests) curl(MANIFEST, `/v2/providers/acme/demo/manifests/${m.digest}`);
    console.log('# Again: nothing uploaded, the tag unchanged.');
    publish();
    curl(INDEX, '/v2/providers/acme/demo/manifests/1.1.0', true);
    return 0;
  } finally {
    await reg.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) process.exitCode = await main();
