/**
 * A minimal HTTP `CONNECT` proxy on 127.0.0.1 for proxy tests. Every tunnel
 * goes to 127.0.0.1 at the requested port, whatever host was asked for, so
 * tests can name `registry.example.test:PORT` without DNS. Plain-http proxy
 * requests (absolute-form) are forwarded the same way.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

export interface TestProxy {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** `CONNECT host:port` targets, and `GET absolute-url` for plain requests, in order. */
  readonly log: string[];
  close(): Promise<void>;
}

export async function startConnectProxy(): Promise<TestProxy> {
  const log: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    log.push(`${req.method ?? 'GET'} ${req.url ?? ''}`);
    const target = new URL(req.url ?? '/');
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: target.port || 80,
        path: target.pathname + target.search,
        method: req.method,
        headers: req.headers,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    log.push(`CONNECT ${req.url ?? ''}`);
    const port = Number((req.url ?? '').split(':').pop());
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}
