import { basename } from 'node:path';
import { z } from 'zod';
import { readConfigFile } from './config-file.js';
import { SkillNameSchema } from './runner-protocol.js';
import type { SkillSource } from './runner-protocol.js';

/**
 * The skills an installation offers by slug (AGENTRY_SKILLS_FILE, the chart's `skills` value):
 *
 * ```yaml
 * skills:
 *   - slug: deep-research
 *     git: https://git.example.com/skills.git
 *     ref: v1                 # optional: a branch or tag (default: the remote's HEAD)
 *     path: deep-research     # optional: the skill's directory inside the repository
 *   - slug: house-style
 *     directory: /opt/agentry/skills/house-style   # on the workspace's disk (the runner image)
 * ```
 *
 * A prompt may also name `github:<owner/repo or git URL>[#ref]` (or an https git URL) directly.
 */
const CatalogEntrySchema = z
  .strictObject({
    slug: z.string().min(1).max(200),
    name: SkillNameSchema.optional(),
    git: z.string().min(1).max(2048).optional(),
    ref: z.string().min(1).max(255).optional(),
    path: z.string().min(1).max(1024).optional(),
    directory: z.string().min(1).max(4096).optional(),
  })
  .refine((entry) => (entry.git === undefined) !== (entry.directory === undefined), {
    message: 'give exactly one of git and directory',
  });
type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

export const SkillCatalogFileSchema = z.strictObject({ skills: z.array(CatalogEntrySchema).max(1000) });

const GITHUB_SHORTHAND = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}$/;

/** A directory name for a skill: lower case, anything else a hyphen, at most 64 characters. */
export function skillDirectoryName(text: string): string {
  const name = text
    .toLowerCase()
    .replace(/\.git$/, '')
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64);
  return name === '' ? 'skill' : name;
}

/** `github:owner/repo#ref`, `github:https://host/repo.git`, or a bare https/http git URL. */
function referenceSource(slug: string): SkillSource | undefined {
  const body = slug.startsWith('github:') ? slug.slice('github:'.length) : slug;
  const [location = '', ref] = body.split('#', 2);
  let url: string;
  if (GITHUB_SHORTHAND.test(location) && slug.startsWith('github:'))
    url = `https://github.com/${location}.git`;
  else if (URL.canParse(location) && ['https:', 'http:'].includes(new URL(location).protocol)) url = location;
  else return undefined;
  const name = skillDirectoryName(basename(new URL(url).pathname));
  return { slug, name, git: { url, ...(ref === undefined || ref === '' ? {} : { ref }) } };
}

export class SkillCatalog {
  private readonly bySlug: ReadonlyMap<string, CatalogEntry>;

  constructor(entries: readonly CatalogEntry[] = []) {
    this.bySlug = new Map(entries.map((entry) => [entry.slug, entry]));
  }

  /** Where the skill comes from; a source with neither git nor directory when nobody knows it. */
  resolve(slug: string): SkillSource {
    const entry = this.bySlug.get(slug);
    if (entry !== undefined) {
      const name = entry.name ?? skillDirectoryName(slug);
      if (entry.directory !== undefined) return { slug, name, directory: entry.directory };
      const git = { url: entry.git ?? '', ...(entry.ref === undefined ? {} : { ref: entry.ref }) };
      return { slug, name, git: { ...git, ...(entry.path === undefined ? {} : { path: entry.path }) } };
    }
    return referenceSource(slug) ?? { slug, name: skillDirectoryName(slug) };
  }
}

/** Reads AGENTRY_SKILLS_FILE (YAML or JSON); no file: only `github:` references resolve. */
export async function loadSkillCatalog(path: string | undefined): Promise<SkillCatalog> {
  if (path === undefined) return new SkillCatalog();
  return new SkillCatalog((await readConfigFile(path, SkillCatalogFileSchema, 'skills')).skills);
}
