import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * Puts this runner's own `agentry` first on the executors' PATH, so the lake client (`agentry lake
 * query ...`, docs/lake-client.md) is there in every runtime and is the runner's version: the
 * images link it into /usr/local/bin already, but the embedded default's runner is `node
 * .../main.js runner` and its workspaces may have no `agentry` at all.
 */

/** A word for sh: single-quoted, its own single quotes closed and escaped. */
const shellWord = (word: string): string => `'${word.replace(/'/g, `'\\''`)}'`;

/** The script that starts the command this process was started with (same node, flags and entry point). */
export function agentryScript(execPath: string, execArgv: readonly string[], entryPoint: string): string {
  const command = [execPath, ...execArgv, entryPoint].map(shellWord).join(' ');
  return `#!/bin/sh\nexec ${command} "$@"\n`;
}

/** Writes `<stateDir>/bin/agentry` and returns the environment executors start from, that directory first on PATH. */
export async function withAgentryOnPath(
  stateDir: string,
  env: Readonly<Record<string, string | undefined>>,
  self: { execPath: string; execArgv: readonly string[]; entryPoint: string },
): Promise<Record<string, string | undefined>> {
  const bin = join(stateDir, 'bin');
  await mkdir(bin, { recursive: true, mode: 0o755 });
  const path = join(bin, 'agentry');
  await writeFile(path, agentryScript(self.execPath, self.execArgv, self.entryPoint), 'utf8');
  await chmod(path, 0o755);
  const inherited = env['PATH'];
  return {
    ...env,
    PATH: inherited === undefined || inherited === '' ? bin : `${bin}${delimiter}${inherited}`,
  };
}
