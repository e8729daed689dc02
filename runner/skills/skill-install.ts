import { cp, mkdir, realpath, rm, stat } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { DispatchPrompt, SkillSource } from '../../platform/runner-protocol.js';
import { WorkspacePrepError, workspaceFilePath } from '../workspace-files.js';
import { fetchSkillRepository } from './skill-fetch.js';

/**
 * Installs the prompt's skills where its executor looks for them (`<workdir>/<skillsDir>/<name>/`)
 * before it runs. Nothing here fails the prompt: an unknown skill, an executor without skills or a
 * source that cannot be fetched becomes a warning the caller puts in the task's event stream.
 */

export interface SkillWarning {
  message: string;
  code: 'skill_unknown' | 'skills_unsupported' | 'skill_not_installed';
  skill?: string;
}

const isFile = (path: string): Promise<boolean> =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/** The skill's directory inside a fetched repository, never outside it (links resolved). */
async function directoryInside(root: string, path: string | undefined): Promise<string> {
  const realRoot = await realpath(root);
  const wanted = resolve(realRoot, path ?? '.');
  const real = await realpath(wanted).catch(() => {
    throw new WorkspacePrepError(`the repository has no directory ${path ?? '.'}`);
  });
  if (real !== realRoot && !real.startsWith(realRoot + sep))
    throw new WorkspacePrepError(`${path ?? '.'} leads outside the repository`);
  return real;
}

async function sourceDirectory(
  source: SkillSource,
  cacheRoot: string,
  allowPrivate: boolean,
  signal: AbortSignal,
): Promise<string> {
  if (source.directory !== undefined) return source.directory;
  if (source.git === undefined) throw new Error('a skill without a source cannot be installed');
  const checkout = await fetchSkillRepository(cacheRoot, source.git, allowPrivate, signal);
  return directoryInside(checkout, source.git.path);
}

async function installOne(
  source: SkillSource,
  skillsRoot: string,
  cacheRoot: string,
  allowPrivate: boolean,
  signal: AbortSignal,
): Promise<void> {
  const from = await sourceDirectory(source, cacheRoot, allowPrivate, signal);
  if (!(await isFile(join(from, 'SKILL.md')))) throw new WorkspacePrepError('its directory has no SKILL.md');
  const target = join(skillsRoot, source.name);
  await rm(target, { recursive: true, force: true });
  await mkdir(skillsRoot, { recursive: true });
  await cp(from, target, {
    recursive: true,
    filter: (path) => !path.split(sep).some((part) => part === '.git' || part === '.agentry-fetched'),
  });
}

/** Installs every known skill of the prompt; the warnings for those it could not install. */
export async function installSkills(
  workdir: string,
  stateDir: string,
  request: Pick<DispatchPrompt, 'skills' | 'skillSources' | 'allowPrivateSkillSources' | 'executor'>,
  signal: AbortSignal,
): Promise<SkillWarning[]> {
  if (request.skills.length === 0) return [];
  const skillsDir = request.executor.skillsDir;
  if (skillsDir === undefined)
    return [
      {
        code: 'skills_unsupported',
        message: `the ${request.executor.name} executor has no skills; skipped: ${request.skills.join(', ')}`,
      },
    ];
  const skillsRoot = workspaceFilePath(workdir, skillsDir);
  const cacheRoot = join(stateDir, 'skill-cache');
  const warnings: SkillWarning[] = [];
  for (const slug of request.skills) {
    const source = request.skillSources.find((candidate) => candidate.slug === slug);
    if (source === undefined || (source.git === undefined && source.directory === undefined)) {
      warnings.push({
        code: 'skill_unknown',
        skill: slug,
        message: `skill "${slug}" is not offered here; the prompt runs without it`,
      });
      continue;
    }
    try {
      await installOne(source, skillsRoot, cacheRoot, request.allowPrivateSkillSources, signal);
    } catch (err) {
      signal.throwIfAborted();
      const why = err instanceof WorkspacePrepError ? err.message : 'it could not be copied';
      warnings.push({
        code: 'skill_not_installed',
        skill: slug,
        message: `skill "${slug}" was not installed: ${why}`,
      });
    }
  }
  return warnings;
}
