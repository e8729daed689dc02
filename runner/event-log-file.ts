import { errnoOf } from '../platform/errno.js';
import { open, readFile, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../platform/log.js';
import { TaskEventSchema } from '../platform/runner-protocol.js';
import type { TaskEvent } from '../platform/runner-protocol.js';

const NEWLINE = 0x0a;

/** The file's bytes, or undefined when there is no file yet. */
async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw new Error(`cannot read the event log ${path}`, { cause: err });
  }
}

const parseLine = (line: Buffer): TaskEvent | undefined => {
  try {
    const parsed = TaskEventSchema.safeParse(JSON.parse(line.toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

interface ParsedLines {
  events: TaskEvent[];
  /** Byte length of the good prefix: everything after it is a torn or unreadable tail. */
  goodBytes: number;
}

/**
 * Parses complete lines. Batches of appends are written and fsynced one after another, each only
 * after the previous is durable, so only the end of the file can be damaged by a crash: an
 * unreadable last line is cut like a torn one. An unreadable line in the
 * middle (disk damage) is skipped with a warning rather than losing every event after it.
 */
function parseLines(bytes: Buffer, complete: number, path: string, logger: Logger): ParsedLines {
  const events: TaskEvent[] = [];
  let start = 0;
  let goodBytes = 0;
  while (start < complete) {
    const end = bytes.indexOf(NEWLINE, start);
    const event = parseLine(bytes.subarray(start, end));
    const isLast = end + 1 >= complete;
    const previous = events.at(-1);
    if (event !== undefined && (previous === undefined || event.seq > previous.seq)) {
      events.push(event);
      goodBytes = end + 1;
    } else if (!isLast) {
      logger.warn({ path, offset: start }, 'skipping an unreadable line of an event log');
      goodBytes = end + 1;
    }
    start = end + 1;
  }
  return { events, goodBytes };
}

/**
 * Reads a task's events.jsonl, cutting away a torn or unreadable last line (a crash mid-write) so
 * that the next append starts on a clean line. No file: no events.
 */
export async function loadEventFile(path: string, logger: Logger): Promise<TaskEvent[]> {
  const bytes = await readIfPresent(path);
  if (bytes === undefined) return [];
  const complete = bytes.lastIndexOf(NEWLINE) + 1;
  const { events, goodBytes } = parseLines(bytes, complete, path, logger);
  if (goodBytes < bytes.length) {
    logger.warn({ path, cutBytes: bytes.length - goodBytes }, 'cutting a torn last line from an event log');
    try {
      await truncate(path, goodBytes);
      await syncPath(path);
    } catch (err) {
      throw new Error(`cannot repair the event log ${path}`, { cause: err });
    }
  }
  return events;
}

/** fsyncs a file or directory by path (a directory's fsync makes new entries in it durable). */
export async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * After `mkdir(dir, { recursive: true })` made `created` (the first directory it made, or undefined
 * when it made none) and those below it down to `dir`: fsyncs the parent of each directory made, so
 * that every new directory entry survives a crash, not only the file written below them.
 */
export async function syncMadeDirectories(created: string | undefined, dir: string): Promise<void> {
  if (created === undefined) return;
  for (let made = dir; ; made = dirname(made)) {
    await syncPath(dirname(made));
    if (made === created || dirname(made) === made) return;
  }
}

/** Index of the first event with seq > after in a seq-ordered list (binary search). */
export function firstAfter(events: readonly TaskEvent[], after: number): number {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const event = events[middle];
    if (event !== undefined && event.seq <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
