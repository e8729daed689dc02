import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RunnerCommand } from '../../operator/runtimes/process.js';

/**
 * `agentry runner` from this repository's TypeScript, for tests that run the process runtime.
 * Absolute paths: a runner's working directory is its workspace, not this repository.
 */
export const REPOSITORY_RUNNER_COMMAND: RunnerCommand = {
  command: process.execPath,
  args: [
    '--import',
    pathToFileURL(join(resolve('.'), 'test/support/register-swc.mjs')).href,
    join(resolve('.'), 'cli/main.ts'),
    'runner',
  ],
};

/** `agentry lake` from this repository's TypeScript, for tests that start the lake server as a process. */
export const REPOSITORY_LAKE_COMMAND: RunnerCommand = {
  command: process.execPath,
  args: [
    '--import',
    pathToFileURL(join(resolve('.'), 'test/support/register-swc.mjs')).href,
    join(resolve('.'), 'cli/main.ts'),
    'lake',
  ],
};
