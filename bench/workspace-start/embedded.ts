// The embedded default as bench/task-latency starts it: API, operator (process runtime) and store in
// this process, real `agentry runner` processes for the workspaces.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanupStep } from '../support/cleanup.js';
import { NAMESPACE } from '../task-latency/config.js';
import { startStack, stopStack } from '../task-latency/stack.js';
import type { Stack } from '../task-latency/stack.js';
import { ORGANIZATION_LIMITS, EMBEDDED_SIZES } from './config.js';
import { removePool } from './pool.js';
import type { Target } from './target.js';
import { progress } from '../support/stats.js';

export async function onEmbedded(work: (target: Target) => Promise<void>): Promise<void> {
  const stack: Stack = {
    dir: await mkdtemp(join(tmpdir(), 'agentry-bench-start-')),
    api: undefined,
    operator: undefined,
    runtime: undefined,
  };
  let target: Target | undefined;
  try {
    progress('starting the embedded stack');
    const key = await startStack(stack, ORGANIZATION_LIMITS);
    if (stack.api === undefined) throw new Error('the API did not start');
    target = {
      label: 'Embedded default (process runtime; API, operator and store in the bench process)',
      endpoint: { api: stack.api, key },
      store: stack.api.store,
      namespace: NAMESPACE,
      sizes: EMBEDDED_SIZES,
      poolResources: undefined,
    };
    await work(target);
  } finally {
    // A pool left behind (the run was interrupted) would refill while the stack deletes its workspaces.
    const made = target;
    if (made !== undefined) await cleanupStep('removing the pool', () => removePool(made));
    await stopStack(stack);
  }
}
