import { execFile } from 'node:child_process';
import { access, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The tool cache the cluster harness uses too (AGENTRY_TOOLS_CACHE, default ~/.cache/agentry-tools). */
export const toolsCache = (): string =>
  process.env.AGENTRY_TOOLS_CACHE ?? join(homedir(), '.cache', 'agentry-tools');

/**
 * A console script of a pinned PyPI package, installed on first use into its own venv in the tool
 * cache (never the system Python), like the harness installs moto. A stamp file marks a finished
 * install, so one cut short is redone rather than half used.
 */
export async function pypiTool(
  pkg: string,
  version: string,
  script: string,
  /** Optional dependencies to install with it (`server` for moto[server]). */
  extras: readonly string[] = [],
): Promise<string> {
  const home = join(toolsCache(), `${pkg}-${version}`);
  const venv = join(home, 'venv');
  const stamp = join(home, '.complete');
  const installed = await access(stamp).then(
    () => true,
    () => false,
  );
  if (!installed) {
    await rm(home, { recursive: true, force: true });
    await run('python3', ['-m', 'venv', venv]);
    await run(join(venv, 'bin', 'pip'), [
      'install',
      '--quiet',
      '--disable-pip-version-check',
      `${pkg}${extras.length === 0 ? '' : `[${extras.join(',')}]`}==${version}`,
    ]);
    await writeFile(stamp, `${pkg}==${version}\n`);
  }
  return join(venv, 'bin', script);
}
