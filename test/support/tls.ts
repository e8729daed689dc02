import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A self-signed certificate made by openssl for one test, for `subject` (its CN) with the given
 * subjectAltName: written to `dir` as key.pem and cert.pem (for NODE_EXTRA_CA_CERTS of a child
 * process), and answered.
 */
async function selfSigned(
  dir: string,
  subject: string,
  subjectAltName: string,
): Promise<{ key: Buffer; cert: string }> {
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    `/CN=${subject}`,
    '-addext',
    `subjectAltName=${subjectAltName}`,
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  return { key: await readFile(keyPath), cert: await readFile(certPath, 'utf8') };
}

/** A self-signed certificate for 127.0.0.1. */
export function loopbackCertificate(dir: string): Promise<{ key: Buffer; cert: string }> {
  return selfSigned(dir, '127.0.0.1', 'IP:127.0.0.1');
}

/** A self-signed certificate for a DNS name (a test server a name resolves to). */
export function nameCertificate(dir: string, name: string): Promise<{ key: Buffer; cert: string }> {
  return selfSigned(dir, name, `DNS:${name}`);
}
