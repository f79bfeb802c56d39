/**
 * Test servers shared by the tests of every module that talks HTTP: a fake
 * provider registry, a fake network mirror, a CONNECT proxy, and the base
 * server with fault switches and a request log. All bind 127.0.0.1 only, on
 * ephemeral ports, with HTTPS from a throwaway CA (`caPath`/`caPem`), and all
 * close themselves (call `close()` in `afterAll`; a lifetime timer and a
 * process-exit hook are the safety net).
 *
 * ```ts
 * const reg = await startFakeRegistry({ providers: await fixtureProviders() });
 * const nf = createNodeFetch({ env: { SSL_CERT_FILE: reg.caPath } });
 * // … provider `${reg.host}/acme/demo` …
 * reg.tamperArchive('acme', 'demo', '1.0.0', 'linux_amd64');
 * ```
 */
export { startServer } from './http-server.js';
export type {
  Fault,
  Handler,
  LoggedConnection,
  LoggedRequest,
  RouteResponse,
  ServerOptions,
  TestServer,
} from './http-server.js';
export { startFakeRegistry } from './registry.js';
export type { FakeRegistry, FakeRegistryOptions, RegistryPaths } from './registry.js';
export { startFakeNetMirror } from './net-mirror.js';
export type { FakeNetMirror, FakeNetMirrorOptions, MirrorHashes } from './net-mirror.js';
export { startConnectProxy } from './proxy.js';
export type { TestProxy } from './proxy.js';
export { fixtureProviders, makeProvider, makeProviderZip, packageFilename } from './packages.js';
export type { FakePackage, FakeProvider, FakeVersion } from './packages.js';
export { signDetached, testKey } from './keys.js';
export type { TestKey, TestKeyName } from './keys.js';
export { testTls } from './tls.js';
export type { TestTls } from './tls.js';
