// The agentcomputer controller's own cost over the embedded store, no cluster: N AgentComputers and
// BENCH_TASKS Tasks (spread over them) are in the store before the controller starts, as after an
// operator restart; the cold pass is timed from its start until every one is `ready`. Workloads
// are ready at once (test/support/ready-runtime.ts): what is measured is the reconciles' reads and
// writes, where listing every Task of the namespace per reconcile was quadratic.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { agentComputerStatus } from '../../api/agent-computer/present.js';
import { AgentComputerType, TaskType } from '../../crds/index.js';
import type { Runtime } from '../../crds/index.js';
import { addAgentComputerController } from '../../operator/agent-computer/controller.js';
import { ControllerManager } from '../../operator/controller/manager.js';
import type { WorkloadRuntime } from '../../operator/runtimes/types.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { readyRuntime } from '../../test/support/ready-runtime.js';
import { agentComputerObject, taskObject } from '../../test/support/workspace-objects.js';
import { indices, pool } from '../support/pool.js';
import { CONCURRENCY, N, TASKS } from './config.js';
import { mib } from './memory.js';
import { seconds, waitAllReady } from './phase.js';

const NAMESPACE = 'bench-acs';
const workspace = (i: number): string => `ac-${i}`;

async function fill(store: EmbeddedStore): Promise<void> {
  await pool(indices(N), CONCURRENCY, (i) =>
    store.create(AgentComputerType, agentComputerObject(NAMESPACE, workspace(i))),
  );
  await pool(indices(TASKS), CONCURRENCY, (i) =>
    store.create(TaskType, taskObject(NAMESPACE, `task-${i}`, workspace(i % N))),
  );
}

export async function runEmbedded(workers: number): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentry-bench-reconcile-'));
  const store = await EmbeddedStore.open(dir);
  const logger = createLogger({ level: 'silent' });
  const registry = new Registry();
  const manager = new ControllerManager({ store, logger, registry });
  try {
    await fill(store);
    addAgentComputerController(manager, {
      store,
      logger,
      registry,
      runtimes: new Map<Runtime, WorkloadRuntime>([['process', readyRuntime]]),
      defaultRuntime: 'process',
      installationKey: new InstallationKey(randomBytes(32)),
      workers,
    });
    const cpu0 = process.cpuUsage();
    const start = performance.now();
    await manager.start();
    const ready = await waitAllReady('agent computers', N, start, async () => {
      const { items } = await store.list(AgentComputerType, { namespace: NAMESPACE });
      return items.filter((ac) => agentComputerStatus(ac) === 'ready').map((ac) => ac.metadata.name);
    });
    const totalMs = performance.now() - start;
    const cpu = process.cpuUsage(cpu0);
    console.log(
      `embedded store, cold pass of ${N} AgentComputers + ${TASKS} Tasks, ${workers} workers: ` +
        `all ready in ${seconds(totalMs)} s (p50 ${seconds(ready[Math.floor(ready.length / 2)] ?? 0)} s), ` +
        `${((cpu.user + cpu.system) / 1e6).toFixed(1)} CPU-seconds, RSS ${mib(process.memoryUsage().rss)} MiB`,
    );
  } finally {
    await manager.stop();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
