import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A message the prompt's `error` event and the caller may show: it names no secret. */
export class WorkspacePrepError extends Error {
  override readonly name = 'WorkspacePrepError';
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what it must find
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Why `filename` cannot name a file inside the working directory, or undefined when it can. Pure:
 * the dispatch route refuses such names with 400 before anything is accepted.
 */
export function filenameProblem(filename: string): string | undefined {
  if (filename.length === 0) return 'must not be empty';
  if (CONTROL.test(filename)) return 'must not contain NUL or control characters';
  if (filename.includes('\\')) return 'must not contain backslashes';
  if (filename.startsWith('/') || isAbsolute(filename)) return 'must be a relative path';
  const segments = filename.split('/');
  if (segments.includes('..')) return 'must not contain ".." segments';
  if (segments.every((s) => s === '' || s === '.')) return 'must name a file';
  return undefined;
}

/** The absolute path of `filename` inside `workdir`; throws when it would land anywhere else. */
export function workspaceFilePath(workdir: string, filename: string): string {
  const problem = filenameProblem(filename);
  if (problem !== undefined) throw new WorkspacePrepError(`file name "${filename}" ${problem}`);
  const root = resolve(workdir);
  const target = resolve(root, filename);
  if (!target.startsWith(root + sep))
    throw new WorkspacePrepError(`file name "${filename}" leaves the working directory`);
  return target;
}

/**
 * Creates the target's directory and checks, after symbolic links are resolved, that it is still
 * inside the working directory (a link left in /code must not carry a download elsewhere).
 */
async function prepareDirectory(workdir: string, target: string, filename: string): Promise<void> {
  const dir = dirname(target);
  await mkdir(dir, { recursive: true });
  const [realRoot, realDir] = await Promise.all([realpath(workdir), realpath(dir)]);
  if (realDir !== realRoot && !realDir.startsWith(realRoot + sep))
    throw new WorkspacePrepError(
      `file name "${filename}" leads outside the working directory through a symbolic link`,
    );
}

const reasonOf = (err: unknown): string => {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string'
      ? cause.code
      : undefined;
  return code ?? 'the request failed';
};

/**
 * Streams one file to `<workdir>/<filename>` through a temporary file beside it, renamed into place
 * when complete. Errors name the file, never the URL: its query string is a signature.
 */
export async function downloadFile(
  workdir: string,
  file: { filename: string; url: string },
  signal: AbortSignal,
): Promise<void> {
  const target = workspaceFilePath(workdir, file.filename);
  await prepareDirectory(workdir, target, file.filename);
  let response: Response;
  try {
    response = await fetch(file.url, { signal, redirect: 'follow' });
  } catch (err) {
    signal.throwIfAborted();
    throw new WorkspacePrepError(`cannot download "${file.filename}": ${reasonOf(err)}`, { cause: err });
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new WorkspacePrepError(`cannot download "${file.filename}": HTTP ${response.status}`);
  }
  const temporary = join(dirname(target), `.${basename(target)}.${randomUUID()}.part`);
  try {
    const body = response.body === null ? Readable.from([]) : Readable.fromWeb(response.body);
    await pipeline(body, createWriteStream(temporary, { flags: 'wx', mode: 0o644 }), { signal });
    await rename(temporary, target);
  } catch (err) {
    await rm(temporary, { force: true });
    signal.throwIfAborted();
    throw new WorkspacePrepError(`cannot download "${file.filename}": ${reasonOf(err)}`, { cause: err });
  }
}
