// The Debian packages the heavy test projects stand on (scripts/test-packages.txt), installed by
// scripts/ensure-packages.sh when missing, as CI's .ci/run does before the tests.
import { execFile as execFileCallback } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const execFile = promisify(execFileCallback);

/**
 * Installs what a package list names and is missing (default scripts/test-packages.txt, what CI
 * installs); `failure` says who needed it.
 */
export async function ensureTestPackages(
  failure: (cause: unknown) => Error,
  list = 'scripts/test-packages.txt',
): Promise<void> {
  const packages = (await readFile(list, 'utf8')).split('\n').filter((p) => p !== '');
  try {
    await execFile('bash', ['scripts/ensure-packages.sh', ...packages], { timeout: 600_000 });
  } catch (err) {
    throw failure(err);
  }
}
