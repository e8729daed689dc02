// The NoCloud seed KubeVirt gives a VM for `cloudInitNoCloud`: an ISO 9660 disk labelled `cidata`
// holding `user-data` and `meta-data`.
import { execFile as execFileCallback } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFile = promisify(execFileCallback);

/** Writes the seed ISO at `iso` (its files in a directory beside it). */
export async function writeNoCloudSeed(
  iso: string,
  seed: { userData: string; metaData: string },
): Promise<void> {
  const dir = `${iso}.d`;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'user-data'), seed.userData, { mode: 0o600 });
  await writeFile(join(dir, 'meta-data'), seed.metaData);
  await execFile('genisoimage', ['-quiet', '-output', iso, '-volid', 'cidata', '-joliet', '-rock', dir]);
}
