import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger } from '../platform/log.js';
import { AGENTRY_VERSION } from '../platform/version.js';
import { RunnerConfigSchema, loadRunnerConfig } from '../runner/config.js';
import { withAgentryOnPath } from '../runner/agentry-on-path.js';
import { createRunExecutor } from '../runner/executors/run.js';
import { createRunnerApp, listenRunner } from '../runner/server.js';
import { RunnerState } from '../runner/state.js';
import { warmUpRunner } from '../runner/warm-up.js';
import type { CliCommand } from './command.js';
import { settingsHelp } from './settings-help.js';

const USAGE = `usage: agentry runner

The agent runner inside a workspace (agent computer): runs the agents of its tasks and serves
their events and artifacts to the operator and the API. The operator starts it (a Pod, a VM or,
with \`agentry serve\`, a local process); prints \`agentry runner listening on URL\` once it listens.

${settingsHelp(RunnerConfigSchema, [
  ['AGENTRY_RUNNER_TOKEN', 'the token every request must carry (required, 32+ characters)'],
  ['AGENTRY_RUNNER_PORT', 'port it listens on (0: any free port)'],
  ['AGENTRY_RUNNER_HOST', 'address it listens on'],
  ['AGENTRY_RUNNER_WORKDIR', 'the working directory of the agents'],
  ['AGENTRY_RUNNER_WORKDIR_SHOWN', 'the working directory as events name it (default: the workdir)'],
  ['AGENTRY_RUNNER_STATE_DIR', "tasks' event logs and prompt records (on the persistent disk)"],
  ['AGENTRY_RUNNER_WARM_UP', 'true: warm the prompt path up before listening (warm-pool members)'],
  ['AGENTRY_LOG_LEVEL', 'fatal, error, warn, info, debug, trace or silent'],
])}
example:
  AGENTRY_RUNNER_TOKEN=$(openssl rand -hex 32) AGENTRY_RUNNER_WORKDIR=/tmp/code \\
    AGENTRY_RUNNER_STATE_DIR=/tmp/state AGENTRY_RUNNER_HOST=127.0.0.1 agentry runner
`;

/** `agentry runner` as a command: no arguments. */
export const runnerCommand: CliCommand = {
  usage: () => USAGE,
  run: async (args) => {
    parseArgs({ args, options: {} });
    return runRunnerCommand();
  },
};

/**
 * `agentry runner`: the agent server inside a workspace. Prints exactly one line on stdout once
 * it listens, `agentry runner listening on http://HOST:PORT`, which the process runtime reads to
 * learn the port; stops gracefully on SIGTERM or SIGINT.
 */
export async function runRunnerCommand(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // Listen for signals before anything starts, so a stop request during start-up is not lost.
  const stopRequested = new Promise<string>((done) => {
    process.once('SIGINT', () => {
      done('SIGINT');
    });
    process.once('SIGTERM', () => {
      done('SIGTERM');
    });
  });
  const config = loadRunnerConfig(env);
  const logger = createLogger({ level: config.AGENTRY_LOG_LEVEL, name: 'agentry-runner' });
  const workdir = resolve(config.AGENTRY_RUNNER_WORKDIR);
  const stateDir = resolve(config.AGENTRY_RUNNER_STATE_DIR);
  await makeDirectory(workdir, 'working directory');
  // 0700: prompt records hold executors' API keys until their prompt ends.
  await makeDirectory(stateDir, 'state directory', 0o700);

  // Executors find this runner's `agentry` (the lake client) first on their PATH.
  const executorBaseEnv = await withAgentryOnPath(stateDir, process.env, {
    execPath: process.execPath,
    execArgv: process.execArgv,
    entryPoint: resolve(process.argv[1] ?? 'dist/cli/main.js'),
  });
  const runner = createRunnerApp({
    runExecutor: createRunExecutor({ baseEnv: executorBaseEnv }),
    token: config.AGENTRY_RUNNER_TOKEN,
    logger,
    state: new RunnerState(),
    version: AGENTRY_VERSION,
    workdir,
    shownWorkdir: config.AGENTRY_RUNNER_WORKDIR_SHOWN ?? workdir,
    stateDir,
  });
  // Before listening: a dispatch must not overtake the prompts a previous run left pending.
  await runner.start();
  // Before listening, so that Ready means warm; a runner with history (a claimed member woken from
  // hibernation) has a prompt waiting for it and skips it.
  if (config.AGENTRY_RUNNER_WARM_UP === 'true' && runner.queue.promptCount === 0)
    await warmUpRunner({ token: config.AGENTRY_RUNNER_TOKEN, logger, version: AGENTRY_VERSION, stateDir });
  const running = await listenRunner(runner.app, {
    host: config.AGENTRY_RUNNER_HOST,
    port: config.AGENTRY_RUNNER_PORT,
    // Stop runs after shutdown(): prompts are recorded and event streams ended by then, so what is
    // still open is idle or was aborted by its client (Node keeps those for ~3 s): cut them soon.
    closeGraceMs: 300,
  });
  logger.info({ url: running.url, workdir, stateDir, version: AGENTRY_VERSION }, 'runner is serving');
  process.stdout.write(`agentry runner listening on ${running.url}\n`);

  const signal = await stopRequested;
  logger.info({ signal }, 'runner is stopping');
  // The running prompt is recorded failed and its streams end before the server closes, so
  // followers see its last events and the server does not wait out its grace period for them.
  await runner.shutdown();
  await running.stop();
  logger.info('runner stopped');
  return 0;
}

async function makeDirectory(path: string, what: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { recursive: true, mode });
  } catch (err) {
    throw new Error(`cannot create the ${what} ${path}`, { cause: err });
  }
}
