// images/install-agent-clis.sh, the runner image's optional agent CLI installs, run for real with a
// fake `npm` first on PATH (it logs its arguments and succeeds, fails, or installs no command).
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve('images/install-agent-clis.sh');

type FakeNpm = 'succeeds' | 'fails' | 'installs-no-command';

// The fake npm uses only shell builtins and absolute paths: PATH holds nothing but its directory,
// so no real agent CLI on this machine can satisfy the script's PATH check.
const FAKE_NPM = `#!/bin/sh
echo "$*" >> "$FAKE_NPM_LOG"
[ "$1" = install ] || exit 0
case "$FAKE_NPM" in
  fails) echo "npm error 404 Not Found" >&2; exit 1 ;;
  installs-no-command) exit 0 ;;
esac
for c in claude codex gemini opencode; do
  printf '#!/bin/sh\\n' > "$FAKE_NPM_BIN/$c"
  /bin/chmod 0755 "$FAKE_NPM_BIN/$c"
done
`;

interface Outcome {
  code: number | null;
  stderr: string;
  npmCalls: string[];
}

async function installAgentClis(
  clis: string[],
  env: Record<string, string>,
  npm: FakeNpm = 'succeeds',
): Promise<Outcome> {
  const bin = await mkdtemp(join(tmpdir(), 'agentry-fake-npm-'));
  const log = join(bin, 'npm.log');
  await writeFile(join(bin, 'npm'), FAKE_NPM, { mode: 0o755 });
  await writeFile(log, '');
  const child = spawn(SCRIPT, clis, {
    env: { PATH: bin, FAKE_NPM: npm, FAKE_NPM_LOG: log, FAKE_NPM_BIN: bin, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((done) => child.once('close', done));
  const npmCalls = (await readFile(log, 'utf8')).split('\n').filter((line) => line !== '');
  await rm(bin, { recursive: true, force: true });
  return { code, stderr, npmCalls };
}

describe('images/install-agent-clis.sh', () => {
  it('fails the build naming the CLI and its package when an asked-for install fails', async () => {
    const outcome = await installAgentClis(
      ['codex'],
      { INSTALL_CODEX: 'true', CODEX_VERSION: '0.169.0' },
      'fails',
    );
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain('codex: npm install -g @openai/codex@0.169.0 failed');
  });

  it('installs an asked-for CLI globally at its pinned version', async () => {
    const outcome = await installAgentClis(['claude-code'], {
      INSTALL_CLAUDE_CODE: 'true',
      CLAUDE_CODE_VERSION: '2.1.330',
    });
    expect(outcome.code).toBe(0);
    expect(outcome.npmCalls).toContain('install -g --no-audit --no-fund @anthropic-ai/claude-code@2.1.330');
  });

  it('runs no npm at all for CLIs not asked for', async () => {
    const outcome = await installAgentClis(['claude-code', 'codex', 'gemini', 'opencode'], {
      INSTALL_CLAUDE_CODE: 'false',
      CLAUDE_CODE_VERSION: '2.1.330',
    });
    expect(outcome.code).toBe(0);
    expect(outcome.npmCalls).toEqual([]);
  });

  it('fails when the install succeeds but the CLI command is not on PATH', async () => {
    const outcome = await installAgentClis(
      ['opencode'],
      { INSTALL_OPENCODE: 'true', OPENCODE_VERSION: '1.18.33' },
      'installs-no-command',
    );
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain("opencode: opencode-ai@1.18.33 installed, but its command 'opencode'");
  });

  it('rejects an install switch that is neither true nor false instead of skipping the CLI', async () => {
    const outcome = await installAgentClis(['gemini'], {
      INSTALL_GEMINI: 'yes',
      GEMINI_CLI_VERSION: '0.61.0',
    });
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain("gemini: the install switch must be true or false, not 'yes'");
    expect(outcome.npmCalls).toEqual([]);
  });
});
