import { randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { open, rename, rm, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { SizeLimit } from '../../platform/objectstore/size-limit.js';
import type { ArtifactFile } from '../../platform/runner-protocol.js';
import { syncPath } from '../event-log-file.js';
import { ArtifactPathError, PARTIAL_SUFFIX, lstatOrUndefined, resolveArtifact } from './paths.js';

/**
 * What tells that a file is still the one whose MD5 was taken: size and mtime alone miss a rewrite
 * of the same size within the clock's granularity; a rewrite always changes ctime, a replacement ino.
 */
export interface FileIdentity {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** The identity of a file just written (its size as written, if it vanished meanwhile). */
async function identityOf(absolute: string, size: number): Promise<FileIdentity> {
  const stats = await lstatOrUndefined(absolute);
  return { size, mtimeMs: stats?.mtimeMs ?? 0, ctimeMs: stats?.ctimeMs ?? 0, ino: stats?.ino ?? 0 };
}

export const sameFile = (a: FileIdentity, b: FileIdentity): boolean =>
  a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

/** The body's MD5 did not match the `content-md5` the sender gave. */
export class ArtifactDigestError extends Error {
  override readonly name = 'ArtifactDigestError';
}

/**
 * Opens artifact `path` for reading, with its size, or undefined when there is no regular file by
 * that name. The file is opened with O_NOFOLLOW (a symbolic link is refused) and O_NONBLOCK (a fifo
 * the agent put there cannot hang the open), then checked on the open handle: what is read is
 * what was checked, whatever is swapped in meanwhile.
 */
export async function openArtifact(
  workdir: string,
  path: string,
): Promise<{ handle: FileHandle; size: number } | undefined> {
  const absolute = await resolveArtifact(workdir, path, { create: false });
  if (absolute === undefined) return undefined;
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined; // absent, a link, or removed meanwhile
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) return { handle, size: stats.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
  await handle.close();
  return undefined;
}

/**
 * Writes artifact `path` from `body`: streamed to a temporary file in the same directory, fsynced,
 * then renamed over the target, so a reader (or a crash) sees the old file or the new one, never
 * half of one. `contentMd5` (base64, RFC 1864) is checked before the rename.
 */
export async function writeArtifact(
  workdir: string,
  path: string,
  body: NodeJS.ReadableStream,
  contentMd5: string | undefined,
): Promise<ArtifactFile & FileIdentity> {
  const absolute = await resolveArtifact(workdir, path, { create: true });
  if (absolute === undefined)
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} cannot be made`, 409);
  const existing = await lstatOrUndefined(absolute);
  if (existing?.isDirectory() === true)
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} is a directory`, 409);
  const temporary = join(dirname(absolute), `.${basename(absolute)}.${randomUUID()}${PARTIAL_SUFFIX}`);
  const meter = new SizeLimit(undefined, `artifact ${JSON.stringify(path)}`, { md5: true });
  try {
    await pipeline(body, meter, createWriteStream(temporary, { flags: 'wx', mode: 0o644 }));
    const digest = meter.md5();
    if (contentMd5 !== undefined && digest.toString('base64') !== contentMd5.trim())
      throw new ArtifactDigestError(`the body of ${JSON.stringify(path)} does not match its content-md5`);
    await syncPath(temporary);
    await rename(temporary, absolute);
    await syncPath(dirname(absolute)); // the rename itself survives a crash
    return { path, md5: digest.toString('hex'), ...(await identityOf(absolute, meter.bytes)) };
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

/** Removes artifact `path` (a link is removed, never followed); true when something was there. */
export async function deleteArtifact(workdir: string, path: string): Promise<boolean> {
  const absolute = await resolveArtifact(workdir, path, { create: false });
  if (absolute === undefined) return false;
  const stats = await lstatOrUndefined(absolute);
  if (stats === undefined) return false;
  if (stats.isDirectory())
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} is a directory`, 409);
  await unlink(absolute);
  return true;
}
