// One real node per machine: an flock(2) on a lock file, held by this process's open file
// description, so the kernel releases it when the process dies (even by kill -9).
import { spawn } from 'node:child_process';
import { mkdir, open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HarnessError } from '../../cluster/harness/tools.js';
import { LOCK_FILE } from './layout.js';
import { sleep } from './processes.js';

let held: FileHandle | undefined;

const BUSY = 75;

/** flock(1) locks the descriptor it inherits: the lock belongs to our open file, not to flock. */
async function tryLock(handle: FileHandle): Promise<boolean> {
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn('flock', ['--nonblock', '--conflict-exit-code', String(BUSY), '3'], {
      stdio: ['ignore', 'ignore', 'ignore', handle.fd],
    });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code === 0) return true;
  if (code === BUSY) return false;
  throw new HarnessError(`flock failed (exit ${String(code)}) on ${LOCK_FILE}`);
}

export const holdsNodeLock = (): boolean => held !== undefined;

/**
 * Takes the machine's real-node lock, waiting a little for a previous run's teardown; fails if
 * another live run holds it.
 */
export async function acquireNodeLock(waitMs = 120_000): Promise<void> {
  if (held !== undefined) return;
  await mkdir(dirname(LOCK_FILE), { recursive: true });
  const handle = await open(LOCK_FILE, 'a');
  const deadline = Date.now() + waitMs;
  while (!(await tryLock(handle))) {
    if (Date.now() > deadline) {
      await handle.close();
      throw new HarnessError(
        `another real node runs on this machine (${LOCK_FILE} is locked): only one at a time; run the realnode and realnode-harness jest projects in separate invocations`,
      );
    }
    await sleep(1_000);
  }
  held = handle;
}

export async function releaseNodeLock(): Promise<void> {
  const handle = held;
  held = undefined;
  await handle?.close();
}
