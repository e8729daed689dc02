import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TargetRefusedError, resolveWebhookTarget } from '../../platform/webhook-targets.js';
import { WorkspacePrepError } from '../workspace-files.js';
import { gitOrFail } from '../workspace-git.js';

/**
 * Fetches a skill's git repository into the workspace's skill cache (under the runner's state
 * directory, once per URL and ref). The runner fetches, not the operator: the skill must land on the
 * workspace's disk, which only the runner can write for pods and VMs, and the fetch then leaves
 * from the workspace, under its network policy, never from the control plane. The URL passes the
 * webhooks' SSRF guard first, and git is pinned to the address that was checked (no DNS rebinding),
 * follows no redirects and speaks only http(s).
 */

const COMPLETE_MARKER = '.agentry-fetched';

/** The guard's words name webhooks; here they are about skill sources. */
const skillWords = (message: string): string =>
  message.replace(/webhook target/g, 'skill source').replace(/webhooks may reach/g, 'skills may come from');

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

/** git `-c` options pinning the host to the checked address and refusing anything but http(s). */
async function pinnedGitOptions(url: string, allowPrivate: boolean): Promise<string[]> {
  let target;
  try {
    target = await resolveWebhookTarget(url, { allowPrivate });
  } catch (err) {
    if (err instanceof TargetRefusedError) throw new WorkspacePrepError(skillWords(err.message));
    throw err;
  }
  const port = target.url.port === '' ? (target.url.protocol === 'https:' ? '443' : '80') : target.url.port;
  const address = target.family === 6 ? `[${target.address}]` : target.address;
  const host = target.url.hostname.replace(/^\[(.*)\]$/, '$1');
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
