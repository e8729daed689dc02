import { spawn } from 'node:child_process';
import { stat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { WorkspacePrepError } from './workspace-files.js';

const GITHUB_SHORTHAND = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
/** A branch name git accepts and that cannot be read as an option. */
const BRANCH = /^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]+$/;
const STDERR_LIMIT = 16 * 1024;

/** `owner/repo` → the GitHub https URL; anything else (an https URL, a local path) as given. */
export function repositoryUrl(githubUrl: string): string {
  return GITHUB_SHORTHAND.test(githubUrl) ? `https://github.com/${githubUrl}.git` : githubUrl;
}

/** Hides `user:token@` in URLs: git quotes the remote in its messages. */
export function redactCredentials(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@');
}

/** The variables that route a process through the egress proxy (any case: curl reads lowercase, git either). */
const PROXY_VARIABLE = /^(https?_proxy|all_proxy|no_proxy)$/i;

/** The egress proxy settings among a prompt's executor environment (docs/egress.md): git's clone goes the same way. */
export function proxyVariablesOf(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => PROXY_VARIABLE.test(name)));
}

/**
 * The runner's environment without its own settings (the workload token), never prompting, with
 * the prompt's proxy variables over the runner's own.
 */
const gitEnvironment = (proxy: Readonly<Record<string, string>>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AGENTRY_')) env[key] = value;
  }
  return { ...env, ...proxy, GIT_TERMINAL_PROMPT: '0' };
};

interface GitResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs git in its own process group, killed as a group when `signal` aborts (a fetch starts helper
 * processes). Never prompts for credentials: a workspace has nobody to answer.
 */
function git(
  args: string[],
  cwd: string,
  signal: AbortSignal,
  proxy: Readonly<Record<string, string>> = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: gitEnvironment(proxy),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString()).slice(-STDERR_LIMIT)));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-STDERR_LIMIT)));
    const kill = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    signal.addEventListener('abort', kill, { once: true });
    child.once('error', (err) => {
      signal.removeEventListener('abort', kill);
      reject(new WorkspacePrepError('cannot run git (is it installed in the workspace?)', { cause: err }));
    });
    child.once('close', (code) => {
      signal.removeEventListener('abort', kill);
      resolve({ code, stdout, stderr });
    });
  });
}

const lastLines = (text: string): string =>
  redactCredentials(
    text
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '')
      .slice(-3)
      .join('; '),
  );

export async function gitOrFail(
  args: string[],
  cwd: string,
  signal: AbortSignal,
  what: string,
  proxy: Readonly<Record<string, string>> = {},
): Promise<string> {
  const result = await git(args, cwd, signal, proxy);
  signal.throwIfAborted();
  if (result.code !== 0) throw new WorkspacePrepError(`${what}: ${lastLines(result.stderr) || 'git failed'}`);
  return result.stdout.trim();
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

/** True when `workdir` is already a checkout of `url`; throws when it is a clone of something else. */
async function alreadyCloned(workdir: string, url: string, signal: AbortSignal): Promise<boolean> {
  const origin = await git(['config', '--get', 'remote.origin.url'], workdir, signal);
  signal.throwIfAborted();
  if (origin.code !== 0 || origin.stdout.trim() !== url)
    throw new WorkspacePrepError(
      'the working directory is already a git repository of another origin; not cloning over it',
    );
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], workdir, signal);
  signal.throwIfAborted();
  return head.code === 0;
}

/**
 * Clones `githubUrl` at `branch` into the working directory, once: a workdir that already is a
 * checkout of that remote is left as it is. `git init` + fetch + checkout rather than `git clone`
 * because the workdir may already hold files (attachments, artifacts); checkout refuses to
 * overwrite an untracked file, so nothing there is lost. A failed first clone removes its `.git`.
 * `proxy`: the prompt's egress proxy variables, for the fetch (the only step that leaves the workspace).
 */
export async function cloneRepository(
  workdir: string,
  githubUrl: string,
  branch: string,
  signal: AbortSignal,
  proxy: Readonly<Record<string, string>> = {},
): Promise<void> {
  const url = repositoryUrl(githubUrl);
  const shown = redactCredentials(url);
  if (url.startsWith('-')) throw new WorkspacePrepError(`"${shown}" is not a repository URL`);
  if (!BRANCH.test(branch)) throw new WorkspacePrepError(`"${branch}" is not a valid branch name`);
  const gitDir = join(workdir, '.git');
  const fresh = !(await exists(gitDir));
  if (!fresh && (await alreadyCloned(workdir, url, signal))) return;
  const what = `cannot clone ${shown} (branch ${branch})`;
  try {
    if (fresh) {
      await gitOrFail(['init', '--quiet'], workdir, signal, what);
      await gitOrFail(['remote', 'add', 'origin', url], workdir, signal, what);
    }
    const ref = `refs/remotes/origin/${branch}`;
    await gitOrFail(
      ['fetch', '--quiet', 'origin', `+refs/heads/${branch}:${ref}`],
      workdir,
      signal,
      what,
      proxy,
    );
    await gitOrFail(
      ['checkout', '--quiet', '-B', branch, '--track', `origin/${branch}`],
      workdir,
      signal,
      what,
    );
  } catch (err) {
    if (fresh) await rm(gitDir, { recursive: true, force: true });
    throw err;
  }
}
