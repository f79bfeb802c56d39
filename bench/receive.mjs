// What receiving the registry lock's archives costs an HTTP client, and
// nothing else (issue 13, bench/PROFILE.md "Stop 25"): the five heavy
// archives of bench/serve-heavy.ts over HTTPS from the fake registry, two at a
// time as provkit's lock downloads them, each body counted and dropped. It
// answers "would another HTTP client make the registry lock cheaper?": the
// Node floor (bench/node-floor.mjs) receives with node:https, and this says
// what node:https costs against node-fetch (provkit's client), curl (C,
// OpenSSL) and whichever other npm clients are installed.
//
// Usage, with the heavy registry running (`npx tsx bench/serve-heavy.ts`
// prints its host and CA file):
//   node bench/receive.mjs HOST CA_FILE [ROUNDS]
// Optional clients are measured when they can be imported, for example after
// `npm i --no-save undici impit wreq-js` (prebuilt native clients: impit and
// wreq-js are Rust, on napi-rs). Each client runs in its own process, rounds
// alternate; the figure is that process's whole CPU time (user + system,
// start-up included), the median of the rounds. `node -e 0` is printed beside
// it: the start-up every Node client pays.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { fileURLToPath } from 'node:url';

const PLATFORMS = ['linux_amd64', 'linux_arm64', 'darwin_amd64', 'darwin_arm64', 'windows_amd64'];
const urls = (/** @type {string} */ host) =>
  PLATFORMS.map((p) => `https://${host}/files/acme/heavy/1.0.0/terraform-provider-heavy_1.0.0_${p}.zip`);

/** @typedef {{status: number, body: AsyncIterable<Uint8Array>}} Answer A response, as the clients give it. */

/**
 * Reads an answer's body to its end; returns its length. Anything but 200 fails.
 * @param {string} url @param {Answer} res
 */
async function bodyLength(url, res) {
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  let n = 0;
  for await (const c of res.body) n += c.byteLength;
  return n;
}

/**
 * The clients: each gets one archive's URL and returns the bytes it received.
 * @type {Record<string, (ca: Buffer) => Promise<(url: string) => Promise<number>>>}
 */
const CLIENTS = {
  'node:https': (ca) => {
    const agent = new Agent({ ca, keepAlive: true });
    return Promise.resolve(
      (/** @type {string} */ url) =>
        new Promise((resolve, reject) => {
          get(url, { agent }, (res) => {
            if (res.statusCode !== 200) {
              res.resume();
              reject(new Error(`${url}: HTTP ${res.statusCode}`));
              return;
            }
            let n = 0;
            res.on('data', (/** @type {Buffer} */ c) => (n += c.length));
            res.on('end', () => resolve(n));
            res.on('error', reject);
          }).on('error', reject);
        }),
    );
  },
  'node-fetch': async (ca) => {
    const { default: fetch } = await import('node-fetch');
    const agent = new Agent({ ca, keepAlive: true });
    return async (url) => {
      const res = await fetch(url, { agent });
      return bodyLength(url, { status: res.status, body: /** @type {AsyncIterable<Uint8Array>} */ (res.body) });
    };
  },
  undici: async (ca) => {
    /** @type {{Agent: new (o: object) => object, request: (url: string, o: object) => Promise<{statusCode: number, body: AsyncIterable<Uint8Array>}>}} */
    const undici = await import(/** @type {string} */ ('undici'));
    const dispatcher = new undici.Agent({ connect: { ca } });
    return async (url) => {
      const res = await undici.request(url, { dispatcher });
      return bodyLength(url, { status: res.statusCode, body: res.body });
    };
  },
  // Browser-impersonating clients: no CA option, so certificate checks are off (one handshake per connection).
  impit: async () => {
    /** @type {{Impit: new (o: object) => {fetch: (url: string) => Promise<Answer>}}} */
    const { Impit } = await import(/** @type {string} */ ('impit'));
    const impit = new Impit({ ignoreTlsErrors: true });
    return async (url) => bodyLength(url, await impit.fetch(url));
  },
  'wreq-js': async () => {
    /** @type {{fetch: (url: string, o: object) => Promise<Answer>}} */
    const wreq = await import(/** @type {string} */ ('wreq-js'));
    return async (url) => bodyLength(url, await wreq.fetch(url, { insecure: true }));
  },
};

/** Clients that are not provkit's dependencies: measured when installed. */
const OPTIONAL = { undici: true, impit: true, 'wreq-js': true };

/** In a child: receives every archive with one client, prints {bytes, cpuS}. */
async function child(/** @type {string} */ name, /** @type {string} */ host, /** @type {string} */ caFile) {
  const make = CLIENTS[name];
  if (!make) throw new Error(`unknown client ${name}`);
  const one = await make(readFileSync(caFile));
  const queue = urls(host);
  let bytes = 0;
  await Promise.all(
    [0, 1].map(async () => {
      for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
        const n = await one(url);
        bytes += n;
      }
    }),
  );
  const u = process.resourceUsage();
  process.stdout.write(`${JSON.stringify({ bytes, cpuS: (u.userCPUTime + u.systemCPUTime) / 1e6 })}\n`);
  process.exit(0);
}

/** CPU seconds of `argv` by GNU time, or undefined without it. */
function timed(/** @type {string[]} */ argv) {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', ...argv], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const [user, sys] = (r.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  return user !== undefined && sys !== undefined ? user + sys : undefined;
}

const median = (/** @type {number[]} */ xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

function main() {
  const [host, caFile, roundsArg] = process.argv.slice(2);
  if (!host || !caFile) {
    process.stderr.write('usage: node bench/receive.mjs HOST CA_FILE [ROUNDS]\n');
    return 2;
  }
  const rounds = Number(roundsArg ?? 3);
  const self = fileURLToPath(import.meta.url);
  /** @type {Map<string, number[]>} */
  const cpu = new Map();
  const add = (/** @type {string} */ k, /** @type {number | undefined} */ v) => {
    if (v !== undefined) cpu.set(k, [...(cpu.get(k) ?? []), v]);
  };
  /** @type {number | undefined} */
  let expected;
  // curl is timed by GNU time; without either it is left out.
  const curl = existsSync('/usr/bin/time') && spawnSync('curl', ['--version'], { stdio: 'ignore' }).status === 0;
  if (!curl) process.stderr.write('curl: not measured (needs curl and /usr/bin/time)\n');
  for (let r = 0; r < rounds; r++) {
    for (const name of Object.keys(CLIENTS)) {
      const out = spawnSync(process.execPath, [self, '--child', name, host, caFile], { encoding: 'utf8' });
      if (out.status !== 0) {
        // An optional client that is not installed is skipped; any other failure fails the run.
        if (name in OPTIONAL && out.stderr.startsWith('ERR_MODULE_NOT_FOUND')) {
          if (r === 0) process.stderr.write(`${name}: not measured (not installed)\n`);
          continue;
        }
        process.stderr.write(`receive: ${name} failed (exit ${out.status}):\n${out.stderr}`);
        return 1;
      }
      /** @type {{bytes: number, cpuS: number}} */
      const got = JSON.parse(out.stdout);
      expected ??= got.bytes;
      if (got.bytes !== expected) {
        process.stderr.write(`receive: ${name} received ${got.bytes} bytes, another client ${expected}\n`);
        return 1;
      }
      add(name, got.cpuS);
    }
    add('node -e 0', timed([process.execPath, '-e', '0']));
    // curl: the five transfers in one process, two at a time, as the Node clients make them.
    if (curl) {
      const args = ['curl', '-sf', '--cacert', caFile, '-Z', '--parallel-max', '2'];
      for (const url of urls(host)) args.push(url, '-o', '/dev/null');
      const cpuS = timed(args);
      if (cpuS === undefined) {
        process.stderr.write('receive: curl failed, or /usr/bin/time is missing\n');
        return 1;
      }
      add('curl (C, OpenSSL)', cpuS);
    }
  }
  process.stdout.write(
    `received ${expected ?? 0} bytes per client; CPU-s (user + system, process start included), median of ${rounds}\n`,
  );
  for (const [k, v] of cpu)
    process.stdout.write(`${k.padEnd(20)} ${median(v).toFixed(2)}  (${v.map((x) => x.toFixed(2)).join(', ')})\n`);
  return 0;
}

if (process.argv[2] === '--child') {
  const [, , , name, host, caFile] = process.argv;
  try {
    await child(/** @type {string} */ (name), /** @type {string} */ (host), /** @type {string} */ (caFile));
  } catch (err) {
    // Not installed: the parent reads the code and skips the client.
    const code = /** @type {{code?: string}} */ (err).code;
    process.stderr.write(`${code === 'ERR_MODULE_NOT_FOUND' ? 'ERR_MODULE_NOT_FOUND ' : ''}${String(err)}\n`);
    process.exit(1);
  }
} else {
  process.exitCode = main();
}
