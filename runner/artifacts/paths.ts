import { errnoOf } from '../../platform/errno.js';
import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { checkArtifactName } from '../../platform/objectstore/artifact-names.js';

/** The artifacts directory inside the working directory (docs/api.md#files-and-artifacts: `/code/artifacts/`). */
export const artifactsRoot = (workdir: string): string => join(workdir, 'artifacts');

/** Temporary files of an upload in progress end in this; the manifest never lists them. */
export const PARTIAL_SUFFIX = '.agentry-partial';

/** A path the runner refuses: answered 400 (bad name) or 409 (the tree is in the way). */
export class ArtifactPathError extends Error {
  override readonly name = 'ArtifactPathError';

  constructor(
    message: string,
    readonly status: 400 | 409,
  ) {
    super(message);
  }
}

/**
 * Why `path` cannot name an artifact, or undefined when it can: the API's artifact filename rules
 * (docs/api.md#files-and-artifacts: relative, no `.` or `..` or empty segments, no backslash, no control characters,
 * length limits), so a name one side accepts the other accepts too. The API stores names
 * NFC-normalized; a file whose name is not would map to another object key, so it is refused here.
 */
export function artifactPathProblem(path: string): string | undefined {
  const checked = checkArtifactName(path);
  if (!checked.ok) return checked.reason;
  if (checked.name !== path) return 'must be NFC-normalized Unicode';
  if (path.endsWith(PARTIAL_SUFFIX)) return `must not end in ${PARTIAL_SUFFIX}`;
  return undefined;
}

/** Nothing is there: the path, or a directory on its way, does not exist. */
export const isMissing = (err: unknown): boolean => errnoOf(err) === 'ENOENT' || errnoOf(err) === 'ENOTDIR';

/** lstat, or undefined when nothing is there. */
export async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (err) {
    if (isMissing(err)) return undefined;
    throw err;
  }
}

/**
 * The absolute path of artifact `path`, after checking that no directory on the way (the artifacts
 * directory included) is a symbolic link or anything but a directory: a link planted by the agent
 * must never carry a read or a write outside /code/artifacts. With `create`, missing directories
 * are made; otherwise a missing one means the file does not exist (undefined).
 */
export async function resolveArtifact(
  workdir: string,
  path: string,
  options: { create: boolean },
): Promise<string | undefined> {
  const problem = artifactPathProblem(path);
  if (problem !== undefined)
    throw new ArtifactPathError(`artifact path ${JSON.stringify(path)} ${problem}`, 400);
  const segments = path.split('/');
  let dir = artifactsRoot(workdir);
  for (const segment of [undefined, ...segments.slice(0, -1)]) {
    if (segment !== undefined) dir = join(dir, segment);
    const stats = await lstatOrUndefined(dir);
    if (stats === undefined) {
      if (!options.create) return undefined;
      await mkdir(dir);
      continue;
    }
    if (!stats.isDirectory())
      throw new ArtifactPathError(
        `artifact path ${JSON.stringify(path)} passes through a non-directory`,
        409,
      );
  }
  return join(dir, segments.at(-1) ?? '');
}
