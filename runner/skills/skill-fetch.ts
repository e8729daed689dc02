import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TargetRefusedError, hostOf, resolveTargetHost } from '../../platform/outbound-targets.js';
import type { TargetSubject } from '../../platform/outbound-targets.js';
import { WorkspacePrepError } from '../workspace-files.js';
import { gitOrFail } from '../workspace-git.js';

/**
 * Fetches a skill's git repository into the workspace's skill cache (under the runner's state
 * directory, once per URL and ref). The runner fetches, not the operator: the skill must land on the
 * workspace's disk, which only the runner can write for pods and VMs, and the fetch then leaves
 * from the workspace, under its network policy, never from the control plane. The URL passes the
 * installation's SSRF guard (platform/outbound-targets.ts) first, and git is pinned to the address that was checked (no DNS rebinding),
 * follows no redirects and speaks only http(s).
 */

const COMPLETE_MARKER = '.agentry-fetched';

const SKILL_SOURCE: TargetSubject = { noun: 'skill source', plural: 'skill sources' };

/** https, or plain http where private sources are allowed (the webhooks' rule); never credentials. */
function parseSource(url: string, allowPrivate: boolean): URL {
  if (!URL.canParse(url)) throw new WorkspacePrepError('skill source is not a valid URL');
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && allowPrivate))
    throw new WorkspacePrepError(
      `skill source must use https${allowPrivate ? ' or http' : ''}, not ${parsed.protocol.replace(/:$/, '')}`,
    );
  if (parsed.username !== '' || parsed.password !== '')
    throw new WorkspacePrepError('skill source must not carry credentials');
  return parsed;
}

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** git `-c` options pinning the host to the checked address and refusing anything but http(s). */
async function pinnedGitOptions(url: string, allowPrivate: boolean): Promise<string[]> {
  const parsed = parseSource(url, allowPrivate);
  const host = hostOf(parsed);
  let resolved;
  try {
    resolved = await resolveTargetHost(host, { allowPrivate }, { subject: SKILL_SOURCE });
  } catch (err) {
    if (err instanceof TargetRefusedError) throw new WorkspacePrepError(err.message);
    throw err;
  }
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? '443' : '80') : parsed.port;
  const address = resolved.family === 6 ? `[${resolved.address}]` : resolved.address;
  return [
    '-c',
    `http.curloptResolve=${host}:${port}:${address}`,
    '-c',
    'http.followRedirects=false',
    '-c',
    'protocol.allow=never',
    '-c',
    'protocol.https.allow=always',
    '-c',
    `protocol.http.allow=${allowPrivate ? 'always' : 'never'}`,
  ];
}

/** The cache directory of `url` at `ref` holding a checkout, fetched now when it is not there yet. */
export async function fetchSkillRepository(
  cacheRoot: string,
  source: { url: string; ref?: string | undefined },
  allowPrivate: boolean,
  signal: AbortSignal,
): Promise<string> {
  const key = createHash('sha256')
    .update(`${source.url}#${source.ref ?? ''}`)
    .digest('hex')
    .slice(0, 32);
  const dir = join(cacheRoot, key);
  if (await exists(join(dir, COMPLETE_MARKER))) return dir;
  const options = await pinnedGitOptions(source.url, allowPrivate);
  await mkdir(cacheRoot, { recursive: true });
  const temporary = join(cacheRoot, `.${key}.${randomUUID()}`);
  const what = `cannot fetch skill repository ${source.url.replace(/\/\/[^/@]*@/, '//***@')}`;
  try {
    await mkdir(temporary);
    await gitOrFail(['init', '--quiet'], temporary, signal, what);
    await gitOrFail(
      [...options, 'fetch', '--quiet', '--depth', '1', source.url, source.ref ?? 'HEAD'],
      temporary,
      signal,
      what,
    );
    await gitOrFail(['checkout', '--quiet', '--detach', 'FETCH_HEAD'], temporary, signal, what);
    await mkdir(join(temporary, COMPLETE_MARKER));
    await rm(dir, { recursive: true, force: true });
    await rename(temporary, dir);
    return dir;
  } finally {
    await rm(temporary, { recursive: true, force: true });
  }
}
