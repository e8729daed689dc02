import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../types.js';
import { errnoOf } from '../../errno.js';
import { writeFileAtomic } from './files.js';

/** How many versions one durable reservation covers: one extra fsync'd write per this many writes. */
export const DEFAULT_BLOCK_SIZE = 1000;

const DECIMAL = /^(0|[1-9][0-9]*)$/;

/** Parses a resourceVersion as the decimal counter value it is, or undefined when it is not one. */
export function parseVersion(value: string): number | undefined {
  if (!DECIMAL.test(value)) return undefined;
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) ? parsed : undefined;
}

/**
 * The global resourceVersion counter. Versions are reserved in blocks: before a version above the
 * durable ceiling (`<dir>/rv`) is handed out, a higher ceiling is written atomically. A restart
 * (even after kill -9) continues above the ceiling, so no version is ever handed out twice, even one
 * that only a deleted object or a DELETED event carried.
 */
export class VersionCounter {
  private constructor(
    private readonly path: string,
    private last: number,
    private ceiling: number,
    private readonly blockSize: number,
  ) {}

  /** `floor`: the highest version found on disk, for a data directory whose ceiling file is missing. */
  static async open(dir: string, floor: number, blockSize = DEFAULT_BLOCK_SIZE): Promise<VersionCounter> {
    const path = join(dir, 'rv');
    const stored = await readCeiling(path);
    const start = Math.max(stored ?? 0, floor);
    return new VersionCounter(path, start, start, blockSize);
  }

  /** The last version handed out (or reserved by an earlier run). */
  get current(): number {
    return this.last;
  }

  /** Hands out the next version, making its reservation durable first. Call inside the write queue. */
  async next(): Promise<number> {
    const version = this.last + 1;
    if (version > this.ceiling) {
      const ceiling = this.last + this.blockSize;
      try {
        await writeFileAtomic(this.path, `${ceiling}\n`);
      } catch (err) {
        throw new StoreError('Unavailable', `reserving resource versions up to ${ceiling} in ${this.path}`, {
          cause: err,
        });
      }
      this.ceiling = ceiling;
    }
    this.last = version;
    return version;
  }
}

async function readCeiling(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw new StoreError('Unavailable', `reading ${path}`, { cause: err });
  }
  const ceiling = parseVersion(text.trim());
  if (ceiling === undefined) {
    throw new StoreError(
      'Unavailable',
      `${path} is corrupt: expected a decimal resource version, found "${text}"`,
    );
  }
  return ceiling;
}
