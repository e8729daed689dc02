import { createHash, randomUUID } from 'node:crypto';
import { constants, createWriteStream } from 'node:fs';
import { open, rename, rm, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ArtifactFile } from '../../platform/runner-protocol.js';
import { ArtifactPathError, PARTIAL_SUFFIX, lstatOrUndefined, resolveArtifact } from './paths.js';

/** The body's MD5 did not match the `content-md5` the sender gave. */
export class ArtifactDigestError extends Error {
  override readonly name = 'ArtifactDigestError';
}

/**
 * Opens artifact `path` for reading, or undefined when there is no regular file by that name. The
 * file is opened with O_NOFOLLOW, so a symbolic link swapped in after the check is refused too.
 */
export async function openArtifact(workdir: string, path: string): Promise<FileHandle | undefined> {
  const absolute = await resolveArtifact(workdir, path, { create: false });
  if (absolute === undefined) return undefined;
  const stats = await lstatOrUndefined(absolute);
  if (stats?.isFile() !== true) return undefined;
  try {
    return await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return undefined; // replaced or removed since the check
  }
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
): Promise<ArtifactFile & { mtimeMs: number }> {
  const absolute = await resolveArtifact(workdir, path, { create: true });
  if (absolute === undefined)
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} cannot be made`, 409);
  const existing = await lstatOrUndefined(absolute);
  if (existing?.isDirectory() === true)
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} is a directory`, 409);
  const temporary = join(dirname(absolute), `.${basename(absolute)}.${randomUUID()}${PARTIAL_SUFFIX}`);
  const hash = createHash('md5');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  try {
    await pipeline(body, meter, createWriteStream(temporary, { flags: 'wx', mode: 0o644 }));
    const digest = hash.digest();
    if (contentMd5 !== undefined && digest.toString('base64') !== contentMd5.trim())
      throw new ArtifactDigestError(`the body of ${JSON.stringify(path)} does not match its content-md5`);
    await fsyncFile(temporary);
    await rename(temporary, absolute);
    await fsyncFile(dirname(absolute)); // the rename itself survives a crash
    const stats = await lstatOrUndefined(absolute);
    return { path, size, md5: digest.toString('hex'), mtimeMs: stats?.mtimeMs ?? 0 };
  } catch (err) {
    await rm(temporary, { force: true });
    throw err;
  }
}

async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
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
