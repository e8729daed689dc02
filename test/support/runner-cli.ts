import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { RunnerClient } from './runner-client.js';
import { collectOutput, spawnAgentry, waitForOutput } from './spawn-cli.js';

const LISTENING = /^agentry runner listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

export interface CliRunner {
  child: ChildProcessWithoutNullStreams;
  client: RunnerClient;
  /** Its output so far (the JSON log and the listening line on stdout). */
  output(): { stdout: string; stderr: string };
}

/**
 * The real `agentry runner` on a free loopback port, with its working and state directories under
 * `root`; `children` gets the child at once, so a runner that never listens is stopped too.
 */
export async function startRunnerCli(
  root: string,
  options: { token: string; children: ChildProcessWithoutNullStreams[]; env?: Record<string, string> },
): Promise<CliRunner> {
  const child = spawnAgentry(['runner'], {
    AGENTRY_RUNNER_TOKEN: options.token,
    AGENTRY_RUNNER_PORT: '0',
    AGENTRY_RUNNER_HOST: '127.0.0.1',
    AGENTRY_RUNNER_WORKDIR: join(root, 'code'),
    AGENTRY_RUNNER_STATE_DIR: join(root, 'state'),
    AGENTRY_LOG_LEVEL: 'warn',
    ...options.env,
  });
  options.children.push(child);
  const output = collectOutput(child);
  const out = await waitForOutput(child, LISTENING, 60_000);
  return { child, client: new RunnerClient(LISTENING.exec(out)?.[1] ?? '', options.token), output };
}
