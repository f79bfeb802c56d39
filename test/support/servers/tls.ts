/**
 * A throwaway CA and a server certificate it signed, made in-process with
 * @peculiar/x509 (ECDSA P-256: milliseconds), once per test process.
 *
 * The server certificate is valid for 127.0.0.1, ::1, `localhost` and
 * `*.example.test` (plus `registry.example.test` and `mirror.example.test`
 * explicitly), so tests may use example names through a proxy or a `lookup`
 * override. The CA is also written to a file (`caPath`) for code that takes
 * `SSL_CERT_FILE`; the directory is removed when the process exits.
 */
import './reflect-shim.js';

import { webcrypto } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

export interface TestTls {
  /** PEM of the CA certificate. */
  readonly caPem: string;
  /** A file holding {@link caPem}. */
  readonly caPath: string;
  /** Server certificate (PEM) and its PKCS#8 private key (PEM). */
  readonly certPem: string;
  readonly keyPem: string;
}

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

let cached: Promise<TestTls> | undefined;

/** The process-wide test CA and server certificate. */
export function testTls(): Promise<TestTls> {
  cached ??= make();
  return cached;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${b64}${b64.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

async function make(): Promise<TestTls> {
  const now = Date.now();
  const notBefore = new Date(now - 3_600_000);
  const notAfter = new Date(now + 7 * 86_400_000);
  const caKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: '01',
    name: 'CN=provkit test CA',
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const serverKeys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject: 'CN=127.0.0.1',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: serverKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
        { type: 'dns', value: 'localhost' },
        { type: 'dns', value: '*.example.test' },
        { type: 'dns', value: 'registry.example.test' },
        { type: 'dns', value: 'mirror.example.test' },
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const keyDer = await webcrypto.subtle.exportKey('pkcs8', serverKeys.privateKey);
  // Workers killed by the test runner skip their 'exit' handlers, so each new
  // directory also sweeps those of processes that are gone (the pid is in the name).
  removeOrphanedTlsDirs();
  const dir = mkdtempSync(join(tmpdir(), `provkit-test-tls-${process.pid}-`));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const caPem = ca.toString('pem') + '\n';
  const caPath = join(dir, 'ca.pem');
  writeFileSync(caPath, caPem);
  return { caPem, caPath, certPem: cert.toString('pem') + '\n', keyPem: pem('PRIVATE KEY', keyDer) };
}

function removeOrphanedTlsDirs(): void {
  for (const name of readdirSync(tmpdir())) {
    const m = /^provkit-test-tls-(\d+)-/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === 'EPERM';
    }
    if (!alive) rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}
