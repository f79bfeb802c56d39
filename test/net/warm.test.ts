// Warm connections (src/net/warm.ts through createNodeFetch's preconnect and
// HttpClient.preconnect): opened ahead of the requests, pooled by the agent
// as a finished request's socket is, so that the next requests to the origin
// open none; never more than asked, counting those already there. Plain HTTP
// and HTTPS (the TLS agent's server name and context), each against a server
// that counts its connections.
import { createServer as createHttpServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

import { afterAll, describe, expect, it } from 'vitest';

import { createNodeFetch, HttpClient } from '../../src/net/index.js';
import { testTls } from '../support/servers/tls.js';

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

async function counting(tls: boolean): Promise<{ url: string; connections: () => number; caPath: string }> {
  const t = await testTls();
  const handler = (_req: unknown, res: ServerResponse): void => {
    res.setHeader('content-type', 'text/plain');
    res.end('ok');
  };
  const server: Server = tls
    ? createHttpsServer({ cert: t.certPem, key: t.keyPem }, handler)
    : createHttpServer(handler);
  let n = 0;
  server.on(tls ? 'secureConnection' : 'connection', () => (n += 1));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`, connections: () => n, caPath: t.caPath };
}

/** Resolves once `f()` holds (checked every 10 ms). */
async function until(f: () => boolean): Promise<void> {
  while (!f()) await new Promise((r) => setTimeout(r, 10));
}

describe('warm connections: opened ahead, used by the next requests, never more than asked', () => {
  it.each([
    ['plain HTTP', false],
    ['HTTPS', true],
  ])('%s: three warmed, three requests at once open none; warming again opens none', async (_label, tls) => {
    const s = await counting(tls);
    const nf = createNodeFetch({ env: { SSL_CERT_FILE: s.caPath } });
    const http = new HttpClient({ fetch: nf.fetch });
    try {
      http.preconnect(s.url, 3);
      await until(() => s.connections() === 3);
      const answers = await Promise.all([0, 1, 2].map(() => http.get(s.url)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
      expect(s.connections()).toBe(3);
      http.preconnect(s.url, 3);
      expect((await http.get(s.url)).status).toBe(200);
      expect(s.connections()).toBe(3);
    } finally {
      nf.close();
    }
  });

  it('a URL it cannot warm (not http, unparsable) is ignored, and a count already met opens nothing', async () => {
    const s = await counting(false);
    const nf = createNodeFetch({ env: {} });
    const http = new HttpClient({ fetch: nf.fetch });
    try {
      http.preconnect(s.url, 0);
      http.preconnect('ftp://127.0.0.1/', 2);
      http.preconnect('not a url', 2);
      await new Promise((r) => setTimeout(r, 50));
      expect(s.connections()).toBe(0);
    } finally {
      nf.close();
    }
  });
});
