import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A self-signed certificate for 127.0.0.1, made by openssl for one test: written to `dir` as
 * key.pem and cert.pem (for NODE_EXTRA_CA_CERTS of a child process), and answered.
 */
export async function loopbackCertificate(dir: string): Promise<{ key: Buffer; cert: string }> {
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
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  return { key: await readFile(keyPath), cert: await readFile(certPath, 'utf8') };
}
