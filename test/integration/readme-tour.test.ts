// The README's five-minute tour, run as a reader pastes it: every ```bash block of the tour, in
// order, in bash, against a real `agentry serve` on a free loopback port with a temporary data
// directory. The ```sh blocks start and stop the server, which this test does itself; the README
// says so. Variables and functions a block defines carry over to the next block, as in one shell.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../support/free-port.js';
import { codeBlocks, section } from '../support/markdown.js';
import { startServeProcess, stopChild } from '../support/spawn-cli.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const TOUR = codeBlocks(section(README, 'A five-minute tour'));
const STEPS = TOUR.filter((block) => block.language === 'bash');
const STEP_TIMEOUT_MS = 180_000;

/** What a step must print, found by what the step does (its code), so reordering keeps them. */
const EXPECTED_OUTPUT: { step: RegExp; output: RegExp }[] = [
  { step: /\/events" -H "API_KEY: \$KEY"$/m, output: /event: done\ndata: \{"status":"completed"/ },
  { step: /follow-up done/, output: /"finalResult": "hello from \w+\\nfollow-up done"/ },
  { step: /\/cancel"/, output: /^canceled$/m },
  { step: /context-lake\/sql/, output: /^\[\{"city":"Lima","total":30\},\{"city":"Oslo","total":17\}\]$/m },
  { step: /webhooks\.log/, output: /"type":"task\.completed"/ },
];

/**
 * One step in bash with errexit and pipefail: the shell state of the steps before is sourced
 * first, and the variables and functions this step adds are saved for the next one.
 */
const stepScript = (code: string): string => `set -eo pipefail
__before=" $(compgen -v | tr '\\n' ' ') "
source ./.tour-state
${code}
{
  for __name in $(compgen -v); do
    case "$__before" in *" $__name "*) ;; *) [[ $__name == __* ]] || declare -p "$__name" ;; esac
  done
  declare -f
} > ./.tour-state
`;

interface StepResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runStep(code: string, cwd: string, env: Record<string, string>): Promise<StepResult> {
  // Its own process group, so whatever the step left running in the background ends with it.
  const bash: ChildProcessWithoutNullStreams = spawn('bash', ['-c', stepScript(code)], {
    cwd,
    env,
    detached: true,
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  bash.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  bash.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    bash.once('exit', (exitCode) => {
      try {
        process.kill(-(bash.pid ?? 0), 'SIGTERM');
      } catch {
        // The group is already gone: nothing was left behind.
      }
      bash.once('close', () => {
        resolve({ code: exitCode, stdout, stderr });
      });
    });
  });
}

describe('the README tour, pasted into bash', () => {
  let server: { url: string; child: ChildProcessWithoutNullStreams } | undefined;
  let dir = '';
  let env: Record<string, string> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentry-readme-tour-'));
    const key = 'agk_readme-tour-0123456789abcdef';
    const dataDir = join(dir, 'data');
    server = await startServeProcess({ AGENTRY_DATA_DIR: dataDir, AGENTRY_API_KEY: key });
    await writeFile(join(dir, '.tour-state'), '');
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      AGENTRY: server.url,
      AGENTRY_API_KEY: key,
      AGENTRY_DATA_DIR: dataDir,
      HOOK_PORT: String(await freeLoopbackPort()),
    };
  }, 120_000);

  afterAll(async () => {
    if (server !== undefined) await stopChild(server.child);
    await rm(dir, { recursive: true, force: true });
  });

  it('runs every code block of the tour except the sh blocks that start and stop the server', () => {
    expect(STEPS.length).toBeGreaterThanOrEqual(6);
    expect(TOUR.filter((block) => block.language !== 'bash').map((block) => block.language)).toEqual([
      'sh',
      'sh',
    ]);
    expect(TOUR[0]?.code).toMatch(/npm start/);
    expect(TOUR.at(-1)?.code).toMatch(/kill/);
    for (const expected of EXPECTED_OUTPUT) {
      expect(STEPS.filter((block) => expected.step.test(block.code))).toHaveLength(1);
    }
  });

  STEPS.forEach((block, index) => {
    it(
      `step ${index + 1}: ${block.caption.slice(0, 80)}`,
      async () => {
        const result = await runStep(block.code, dir, env);
        expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
        for (const expected of EXPECTED_OUTPUT.filter((candidate) => candidate.step.test(block.code))) {
          expect(result.stdout).toMatch(expected.output);
        }
      },
      STEP_TIMEOUT_MS,
    );
  });
});
