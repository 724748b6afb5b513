import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether a certificate can be made here (openssl), for a real TLS server. */
export const HAS_OPENSSL = spawnSync('openssl', ['version'], { stdio: 'ignore' }).status === 0;

/** A key and a certificate made here, signed by itself, for `altName` (`IP:127.0.0.1`, `DNS:…`). */
export function certificate(altName: string): { key: Buffer; cert: Buffer } {
  const folder = mkdtempSync(join(tmpdir(), 'pictor-tls-'));
  try {
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=pictor test', '-addext', `subjectAltName=${altName}`, '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem')],
      { stdio: 'ignore' },
    );
    if (made.status !== 0) throw new Error('openssl could not make a certificate');
    return { key: readFileSync(join(folder, 'key.pem')), cert: readFileSync(join(folder, 'cert.pem')) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
