import { randomBytes } from 'node:crypto';
import { link, readFile, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { StoreError } from '../types.js';
import { errnoOf } from '../../errno.js';
import { FILE_MODE, fsyncDirectory } from './files.js';

const MAX_ATTEMPTS = 5;

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === 'EPERM';
  }
}

interface LockContent {
  pid: number;
  token: string;
}

function parseLock(text: string): LockContent | undefined {
  const [pidLine, token] = text.split('\n');
  const pid = Number(pidLine);
  return Number.isSafeInteger(pid) && pid > 0 ? { pid, token: token ?? '' } : undefined;
}

async function readLock(path: string): Promise<LockContent | 'missing' | undefined> {
  try {
    return parseLock(await readFile(path, 'utf8'));
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return 'missing';
    throw err;
  }
}

/**
 * The exclusive lock on a data directory: `<dir>/LOCK` holds the owner's pid. A lock whose process is
 * gone (the owner was killed) is taken over. The file appears atomically with its content (written
 * aside, then hard-linked into place, which fails if it exists), so a reader never sees it half-written.
 */
export class DataDirLock {
  private constructor(
    private readonly path: string,
    private readonly token: string,
  ) {}

  static async acquire(dir: string): Promise<DataDirLock> {
    const path = join(dir, 'LOCK');
    const token = randomBytes(8).toString('hex');
    try {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
        if (await tryCreate(path, token)) return new DataDirLock(path, token);
        const holder = await readLock(path);
        if (holder === 'missing') continue;
        if (holder !== undefined && isAlive(holder.pid)) {
          throw new StoreError('Unavailable', `data directory ${dir} is in use by process ${holder.pid}`);
        }
        await takeOverStale(path, holder);
      }
    } catch (err) {
      if (err instanceof StoreError) throw err;
      throw new StoreError('Unavailable', `locking data directory ${dir}`, { cause: err });
    }
    throw new StoreError(
      'Unavailable',
      `data directory ${dir}: could not take its lock, it keeps changing hands`,
    );
  }

  /** Removes the lock file if it is still ours. */
  async release(): Promise<void> {
    const current = await readLock(this.path);
    if (current === 'missing' || current?.pid !== process.pid || current.token !== this.token) return;
    await unlink(this.path);
  }
}

async function tryCreate(path: string, token: string): Promise<boolean> {
  const aside = `${path}.${token}.tmp`;
  await writeFile(aside, `${process.pid}\n${token}\n`, { mode: FILE_MODE, flag: 'wx' });
  try {
    await link(aside, path);
    return true;
  } catch (err) {
    if (errnoOf(err) === 'EEXIST') return false;
    throw err;
  } finally {
    await rm(aside, { force: true });
  }
}

/**
 * Moves a dead owner's lock out of the way. Renaming first and checking what was moved keeps two
 * processes that both saw the same stale lock from removing each other's fresh one.
 */
async function takeOverStale(path: string, stale: LockContent | undefined): Promise<void> {
  const moved = `${path}.stale-${randomBytes(6).toString('hex')}`;
  try {
    await rename(path, moved);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return; // someone else moved it; try again
    throw err;
  }
  const content = await readLock(moved);
  const isTheStaleLock =
    content === undefined ||
    content === 'missing' ||
    (content.pid === stale?.pid && content.token === stale.token);
  if (!isTheStaleLock && isAlive(content.pid)) {
    await link(moved, path).catch(() => undefined); // put a live owner's lock back where it belongs
  }
  await rm(moved, { force: true });
  await fsyncDirectory(dirname(path));
}
