// The Node floor of a cold lock from a registry (issue 13): the least a Node
// program does to hash a provider's archives from a registry, and nothing
// else, so that bench/commands.ts can say how close provkit's `lock` is to
// what Node itself allows on this machine, beside the native floor (zhh1).
//
// What it does, per platform: the registry's download request, then the
// archive over HTTPS with node:https ('data' events, no node-fetch, no stream
// pipeline), moved to a hash worker in 256 KiB blocks (transferred, memory
// reused), where it is hashed as it arrives: the SHA-256 of every byte (zh:)
// and, per entry, inflate + SHA-256 + CRC-32 (provkit's stream digester,
// bench/node-floor-worker.mjs). Each archive's zh: must equal the registry's
// `shasum`, or the run fails. The hash workers start at once, overlapping the
// first requests; downloads are scheduled as the least a CPU-bound batch
// needs (`sharingLimit` below: one per core, the last three together on 2
// cores, so that no core idles at the end).
//
// What it leaves out (provkit does it, the floor does not): configuration,
// service discovery beyond one request, SHA256SUMS and its signature, the
// temporary archive files, the authoritative pass over the central directory,
// the lock file, and loading provkit itself.
//
// Usage: node bench/node-floor.mjs HOST CA_FILE NAMESPACE/TYPE VERSION OS_ARCH...
//   (needs `npm run build`: its worker imports dist/hashing/zip-stream.js)
import { readFileSync } from 'node:fs';
import { Agent, get } from 'node:https';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

/**
 * At most `base` tasks at once, except at the tail of the batch: every task
 * not finished yet runs at once as soon as they all fit in `shareUpTo` (5
 * equal packages on 2 cores run as 2, then 3 sharing the cores: 2.5
 * package-times instead of 3). The rule is applied when a task settles and
 * once after the tasks given in one turn of the event loop are all known.
 * @param {number} base
 * @param {number} shareUpTo
 * @returns {<T>(task: () => Promise<T>) => Promise<T>}
 */
function sharingLimit(base, shareUpTo) {
  const tail = Math.max(base, shareUpTo);
  /** @type {Array<() => void>} */
  const waiting = [];
  let active = 0;
  let deferred = false;
  const pump = (/** @type {boolean} */ withTail) => {
    const limit = withTail && active + waiting.length <= tail ? Number.POSITIVE_INFINITY : base;
    while (active < limit && waiting.length > 0) {
      active += 1;
      /** @type {() => void} */ (waiting.shift())();
    }
  };
  return (task) =>
    new Promise((resolve, reject) => {
      waiting.push(() => {
        task()
          .then(resolve, reject)
          .finally(() => {
            active -= 1;
            pump(true);
          });
      });
      pump(false);
      if (waiting.length > 0 && !deferred && tail !== base) {
        deferred = true;
        setImmediate(() => {
          deferred = false;
          pump(true);
        });
      }
    });
}

const BLOCK = 256 * 1024;
/** Bytes sent to a worker and not yet digested, above which the response is paused. */
const IN_FLIGHT = 16 * BLOCK;

const [host, caFile, provider, version, ...platforms] = process.argv.slice(2);
if (!host || !caFile || !provider || !version || platforms.length === 0) {
  process.stderr.write('usage: node bench/node-floor.mjs HOST CA_FILE NAMESPACE/TYPE VERSION OS_ARCH...\n');
  process.exit(2);
}
const cores = availableParallelism();
// The hash pool's defaults (hashing/pool.ts) on this machine.
const shareUpTo = 2 * cores - 1;
const limit = sharingLimit(cores, shareUpTo);
/** Blocks the workers handed back, for the next bytes (no fresh memory per block). */
/** @type {Buffer<ArrayBuffer>[]} */
const spares = [];
const workers = Array.from({ length: Math.min(shareUpTo, platforms.length) }, () => {
  const w = new Worker(new URL('./node-floor-worker.mjs', import.meta.url));
  w.on('message', (/** @type {{spare?: ArrayBuffer}} */ m) => {
    if (m.spare) spares.push(Buffer.from(m.spare));
  });
  return w;
});
const agent = new Agent({ ca: readFileSync(caFile), keepAlive: true });

/**
 * A JSON document (the discovery document, a download response).
 * @param {string} url
 * @returns {Promise<Record<string, string>>}
 */
function getJson(url) {
  return new Promise((resolve, reject) => {
    get(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s) => (body += s));
      res.on('end', () => {
        if (res.statusCode !== 200) {
          reject(new Error(`${url}: ${res.statusCode}`));
          return;
        }
        /** @type {Record<string, string>} */
        const doc = JSON.parse(body);
        resolve(doc);
      });
      res.on('error', reject);
    }).on('error', reject);
  });
}

/**
 * Downloads one archive into worker `w`; resolves with its zh: and entry count.
 * @param {Worker} w @param {string} url
 * @returns {Promise<{zh: string, entries: number}>}
 */
function hashDownload(w, url) {
  return new Promise((resolve, reject) => {
    /** @type {import('node:http').IncomingMessage | undefined} */
    let res;
    let inFlight = 0;
    let paused = false;
    /** @type {Buffer | undefined} */
    let block;
    let used = 0;
    const onMessage = (/** @type {any} */ m) => {
      if (m.ack) {
        inFlight -= m.ack;
        if (paused && inFlight <= IN_FLIGHT) {
          paused = false;
          res?.resume();
        }
      } else if (m.done) {
        w.off('message', onMessage);
        resolve({ zh: m.zh, entries: m.entries });
      }
    };
    w.on('message', onMessage);
    w.postMessage({ kind: 'start' });
    const send = () => {
      const b = /** @type {Buffer} */ (block);
      inFlight += used;
      w.postMessage({ kind: 'chunk', buf: b.buffer, n: used }, [b.buffer]);
      block = undefined;
      used = 0;
    };
    get(url, { agent }, (r) => {
      res = r;
      if (r.statusCode !== 200) {
        reject(new Error(`${url}: ${r.statusCode}`));
        r.resume();
        return;
      }
      r.on('data', (/** @type {Buffer} */ chunk) => {
        for (let at = 0; at < chunk.length;) {
          block ??= spares.pop() ?? Buffer.allocUnsafeSlow(BLOCK);
          const n = chunk.copy(block, used, at);
          used += n;
          at += n;
          if (used === BLOCK) send();
        }
        if (!paused && inFlight > IN_FLIGHT) {
          paused = true;
          r.pause();
        }
      });
      r.on('end', () => {
        if (used > 0) send();
        w.postMessage({ kind: 'end' });
      });
      r.on('error', reject);
    }).on('error', reject);
  });
}

const started = performance.now();
const discovery = await getJson(`https://${host}/.well-known/terraform.json`);
const base = new URL(discovery['providers.v1'], `https://${host}/`);
const idle = [...workers];
/** @type {string[]} */
const failures = [];
/** @type {Array<{platform: string, zh: string, entries: number}>} */
const results = [];
await Promise.all(
  platforms.map((platform) =>
    limit(async () => {
      const [os, arch] = platform.split('_');
      const metaUrl = new URL(`${provider}/${version}/download/${os}/${arch}`, base).href;
      const meta = await getJson(metaUrl);
      // At most shareUpTo downloads run at once, one worker each.
      const w = idle.pop();
      if (!w) throw new Error('internal: no idle worker');
      // Relative links resolve against the response that gave them, as provkit does.
      const got = await hashDownload(w, new URL(meta.download_url, metaUrl).href);
      idle.push(w);
      if (got.zh !== meta.shasum) failures.push(`${platform}: zh:${got.zh}, the registry says ${meta.shasum}`);
      results.push({ platform, ...got });
    }).catch((err) => failures.push(`${platform}: ${err instanceof Error ? err.message : String(err)}`)),
  ),
);
const usage = process.resourceUsage();
process.stdout.write(
  `${JSON.stringify({
    seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
    cpuSeconds: Number(((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(3)),
    archives: results.map((r) => ({ platform: r.platform, zh: `zh:${r.zh}`, entries: r.entries })),
  })}\n`,
);
if (failures.length > 0) {
  process.stderr.write(`node-floor: ${failures.join('\n')}\n`);
  process.exit(1);
}
process.exit(0);
