import { mkdirSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { z } from 'zod';
import { errnoOf } from '../errno.js';

/**
 * Where `file://` datasets may read: only below the installation's file roots
 * (AGENTRY_LAKE_FILE_ROOTS; in the embedded default also the organization's own
 * `<data dir>/lake-files/<namespace>/`). Paths are compared after following symbolic links
 * (realpath), on whole segments, so neither a link pointing out, `..`, nor a root that is a prefix
 * of a sibling's name (`/data/org-a` vs `/data/org-ab`) leads elsewhere. The API checks a dataset
 * when it is saved; the lake checks every file again when it loads (a config may be written by
 * kubectl, and links may change).
 */

/** The rule, as a 400 and a dataset status say it (never with a server path). */
export const FILE_ROOTS_RULE =
  'file:// datasets may read only below the file roots of this installation ' +
  '(AGENTRY_LAKE_FILE_ROOTS, and in the embedded default the organization’s lake-files directory), ' +
  'symbolic links followed';

/** Parses a comma-separated list of absolute directories; throws on a relative one. */
export function parseFileRoots(text: string): string[] {
  const roots = text
    .split(',')
    .map((root) => root.trim())
    .filter((root) => root !== '');
  for (const root of roots)
    if (!isAbsolute(root)) throw new Error('file roots must be absolute directories, comma separated');
  return roots.map((root) => resolve(root));
}

/** AGENTRY_LAKE_FILE_ROOTS as the API's and the lake's configurations read it. */
export const FileRootsSetting = z
  .string()
  .default('')
  .transform((text, ctx) => {
    try {
      return parseFileRoots(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: err instanceof Error ? err.message : String(err) });
      return z.NEVER;
    }
  });

/** The embedded default's directory of one organization's files. */
export const organizationFileRoot = (dataDir: string, namespace: string): string =>
  join(resolve(dataDir), 'lake-files', namespace);

/**
 * The organization's directory, created when missing: a place for its files, and something a
 * confined lake server's sandbox can bind.
 */
export function ensureOrganizationFileRoot(dataDir: string, namespace: string): string {
  const root = organizationFileRoot(dataDir, namespace);
  mkdirSync(root, { recursive: true, mode: 0o700 });
  return root;
}

/**
 * The real path of `path`: symbolic links followed. A path that does not exist (yet) is its
 * deepest existing ancestor's real path followed by the rest, so a dataset can be saved before
 * its files are written.
 */
export async function realPathOf(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    const code = errnoOf(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    const parent = dirname(path);
    if (parent === path) return path;
    return join(await realPathOf(parent), basename(path));
  }
}

const isWithin = (path: string, root: string): boolean =>
  path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);

/** The real paths of the roots (a root that does not exist is kept as written: nothing is below it). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map((root) => realPathOf(resolve(root))));
}

/** Whether the real path of `path` lies below one of `roots` (already real paths). */
export async function isBelowRoots(path: string, roots: readonly string[]): Promise<boolean> {
  if (!isAbsolute(path) || roots.length === 0) return false;
  const real = await realPathOf(resolve(path));
  return roots.some((root) => isWithin(real, root));
}
