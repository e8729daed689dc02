// The embedded stack, as test/integration/tasks-end-to-end starts it: store, operator with the
// process runtime (real runner processes), and the API server.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { AgentComputerType, OrganizationType } from '../../crds/index.js';
import type { Organization } from '../../crds/index.js';
import { startOperator } from '../../operator/operator.js';
import type { RunningOperator } from '../../operator/operator.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import type { RunnerCommand } from '../../operator/runtimes/process.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { ensureInstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { isStoreError } from '../../platform/store/types.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { CONTROL_NAMESPACE, startTestApi } from '../../test/support/api-server.js';
import type { TestApi } from '../../test/support/api-server.js';
import { REPOSITORY_RUNNER_COMMAND } from '../../test/support/runner-command.js';
import { cleanupStep } from '../support/cleanup.js';
import { until } from '../support/wait.js';
import {
  AGENT_COMPUTER_LIMIT,
  LOG_LEVEL,
  ORG,
  STOP_GRACE_MS,
  TRACE,
  CPU_PROFILE_DIR,
  interruption,
} from './config.js';

export interface Stack {
  dir: string;
  api: TestApi | undefined;
  operator: RunningOperator | undefined;
  runtime: ProcessRuntime | undefined;
}

/**
 * The runners' per-hop marks (bench/task-latency/hops.ts); with BENCH_CPU_PROF=<dir> their CPU
 * profiles, unconfined so that they can write there.
 */
function runnerOptions(): { runnerCommand: RunnerCommand; env: Record<string, string>; isolation?: 'none' } {
  const env: Record<string, string> = TRACE ? { AGENTRY_EVENT_TRACE: '1' } : {};
  if (CPU_PROFILE_DIR === undefined) return { runnerCommand: REPOSITORY_RUNNER_COMMAND, env };
  const { command, args } = REPOSITORY_RUNNER_COMMAND;
  const profiled = { command, args: ['--cpu-prof', `--cpu-prof-dir=${CPU_PROFILE_DIR}`, ...args] };
  return { runnerCommand: profiled, env, isolation: 'none' };
}

/**
 * Starts the stack; answers an API key of the bench's organization, whose limits are raised to
 * `limits` (default: room for AGENT_COMPUTER_LIMIT workspaces).
 */
export async function startStack(
  stack: Stack,
  limits: OrganizationLimits = { agentComputers: AGENT_COMPUTER_LIMIT },
): Promise<string> {
  const store = await EmbeddedStore.open(join(stack.dir, 'store'));
  const logger = createLogger({ level: LOG_LEVEL });
  let notify: (ns: string, name: string) => void = () => undefined;
  stack.runtime = new ProcessRuntime({
    dataDir: stack.dir,
    logger,
    stopGraceMs: STOP_GRACE_MS,
    // The runners' per-hop marks, written to their state directories (bench/task-latency/hops.ts).
    ...runnerOptions(),
    onChange: (ns, name) => {
      notify(ns, name);
    },
  });
  try {
    stack.operator = await startOperator({
      store,
      logger,
      registry: new Registry(),
      runtimes: new Map([['process', stack.runtime]]),
      defaultRuntime: 'process',
      controlNamespace: CONTROL_NAMESPACE,
      installationKey: await ensureInstallationKey(store, CONTROL_NAMESPACE),
      executors: new ExecutorCatalog(),
      // As `agentry serve` does.
      keepRunnerConnections: true,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  notify = stack.operator.notifyAgentComputer;
  stack.api = await startTestApi({ store });
  const key = await stack.api.key({ org: ORG });
  await raiseLimits(stack.api, limits);
  return key;
}

/** Organization limits a bench raises: each given one to at least that much. */
export type OrganizationLimits = Partial<Organization['spec']['limits']>;

const reaches = (org: Organization | undefined, wanted: OrganizationLimits): boolean => {
  if (org === undefined) return false;
  const { limits } = org.spec;
  return (
    limits.agentComputers >= (wanted.agentComputers ?? 0) &&
    limits.concurrentTasks >= (wanted.concurrentTasks ?? 0) &&
    limits.webhooks >= (wanted.webhooks ?? 0)
  );
};

/** Raises organization `org`'s limits to at least `limits` in `store`. */
export async function raiseOrganizationLimits(
  store: ResourceStore,
  org: string,
  limits: OrganizationLimits,
): Promise<void> {
  // The operator writes the new organization's status meanwhile: read again on a conflict.
  for (let attempt = 1; ; attempt++) {
    const current = await store.get(OrganizationType, undefined, org);
    if (current === undefined) throw new Error(`organization ${org} is missing`);
    if (reaches(current, limits)) return;
    try {
      await store.replace(OrganizationType, {
        ...current,
        spec: { ...current.spec, limits: { ...current.spec.limits, ...limits } },
      });
      return;
    } catch (err) {
      if (!isStoreError(err, 'Conflict') || attempt >= 10) throw err;
      await sleep(20);
    }
  }
}

/** Deleted workspaces stop counting at once, but leave room anyway for ones a failed run left behind. */
async function raiseLimits(api: TestApi, limits: OrganizationLimits): Promise<void> {
  await raiseOrganizationLimits(api.store, ORG, limits);
  await until(
    'the API to see the raised limits',
    10_000,
    () =>
      Promise.resolve(reaches(api.readModel.organizations.get(undefined, ORG), limits) ? true : undefined),
    { signal: interruption.signal, pollMs: 20 },
  );
}

/** Deletes every workspace and waits for the runners to go, then stops everything; never throws. */
export async function stopStack(stack: Stack): Promise<void> {
  const { api, operator, runtime } = stack;
  if (api !== undefined && operator !== undefined) {
    await cleanupStep('deleting the workspaces', async () => {
      const { items } = await api.store.list(AgentComputerType);
      await Promise.all(
        items.map((ac) => api.store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name)),
      );
      const deadline = Date.now() + 60_000;
      while ((await api.store.list(AgentComputerType)).items.length > 0 && Date.now() < deadline)
        await sleep(100);
    });
  }
  if (operator !== undefined) await cleanupStep('operator.stop()', () => operator.stop());
  if (runtime !== undefined) await cleanupStep('runtime.close()', () => runtime.close({ stopRunners: true }));
  if (api !== undefined) await cleanupStep('api.stop()', () => api.stop());
  await cleanupStep('removing the data directory', () => rm(stack.dir, { recursive: true, force: true }));
}
