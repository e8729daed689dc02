// The operator in this process with the process runtime only (runners from the repository), as
// the embedded default runs it, over a store the test opened: for tests of what the operator does
// with real runner processes, without the API server.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Registry } from 'prom-client';
import { startOperator } from '../../operator/operator.js';
import type { OperatorOptions, RunningOperator } from '../../operator/operator.js';
import { ProcessRuntime } from '../../operator/runtimes/process.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import type { ResourceStore } from '../../platform/store/types.js';
import { AgentComputerType, WorkspacePoolType } from '../../crds/index.js';
import { REPOSITORY_RUNNER_COMMAND } from './runner-command.js';
import { until } from './until.js';

export interface ProcessOperator {
  operator: RunningOperator;
  runtime: ProcessRuntime;
  registry: Registry;
}

/** Runners live below `dir`; `options` adds to (or replaces) the operator's options. */
export async function startProcessOperator(
  store: ResourceStore,
  dir: string,
  options: Partial<OperatorOptions> = {},
): Promise<ProcessOperator> {
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  let notify: (ns: string, name: string) => void = () => undefined;
  const runtime = new ProcessRuntime({
    dataDir: dir,
    runnerCommand: REPOSITORY_RUNNER_COMMAND,
    logger,
    stopGraceMs: 2_000,
    onChange: (ns, name) => {
      notify(ns, name);
    },
  });
  const operator = await startOperator({
    store,
    installationKey: new InstallationKey(randomBytes(32)),
    executors: new ExecutorCatalog(),
    logger,
    registry,
    runtimes: new Map([['process', runtime]]),
    defaultRuntime: 'process',
    ...options,
  });
  notify = operator.notifyAgentComputer;
  return { operator, runtime, registry };
}

/**
 * Removes every WorkspacePool (first, or they would make new members as the old ones go) and
 * AgentComputer, waits until the members are gone, then stops the operator, its runners and the
 * store, and removes `dir`.
 */
export async function stopAfterPools(
  store: ResourceStore & { close(): Promise<void> },
  running: Omit<ProcessOperator, 'registry'>,
  dir: string,
): Promise<void> {
  const pools = (await store.list(WorkspacePoolType)).items;
  await Promise.all(
    pools.map((pool) => store.delete(WorkspacePoolType, pool.metadata.namespace, pool.metadata.name)),
  );
  const { items } = await store.list(AgentComputerType);
  await Promise.all(
    items.map((ac) => store.delete(AgentComputerType, ac.metadata.namespace, ac.metadata.name)),
  );
  await until('every agent computer removed', async () =>
    (await store.list(AgentComputerType)).items.length === 0 ? true : undefined,
  );
  await running.operator.stop();
  await running.runtime.close({ stopRunners: true });
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
