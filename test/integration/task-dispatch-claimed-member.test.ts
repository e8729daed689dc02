// The task controller dispatches the first prompt of a claimed warm-pool member before the operator
// has observed the claim's generation: the claim changes no workload field, so Ready observed for
// the generation before still holds (crds/agent-computer/readiness.ts). Real embedded store, a real
// runner on loopback, the real reconciler; no AgentComputer controller runs to re-stamp Ready.
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentComputerType, TaskType, readyForCurrentSpec } from '../../crds/index.js';
import { TaskEventFollowers } from '../../operator/task/event-followers.js';
import { TaskReconciler } from '../../operator/task/reconciler.js';
import { ExecutorCatalog } from '../../platform/executor-catalog.js';
import { InstallationKey } from '../../platform/installation-key.js';
import { createLogger } from '../../platform/log.js';
import { RunnerClient } from '../../platform/runner-client.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { addPoolMember, claimMember, createPool } from '../support/pool-members.js';
import { readyStatus } from '../support/ready-status.js';
import { startRunner, stopStartedRunners } from './runner-tasks-support.js';

const NAMESPACE = 'agentry-org-claimed';
let dir: string;
let store: EmbeddedStore;
const followers = new TaskEventFollowers({
  logger: createLogger({ level: 'silent' }),
  onProgress: () => undefined,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-claimed-dispatch-'));
  store = await EmbeddedStore.open(join(dir, 'store'));
});

afterAll(async () => {
  await followers.stopAll();
  await stopStartedRunners();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

it("dispatches a claimed member's first prompt while its Ready is of the generation before the claim", async () => {
  const installationKey = new InstallationKey(randomBytes(32));
  const pool = await createPool(store, NAMESPACE);
  const member = await addPoolMember(store, pool, 'member-1', { ready: false });
  const token = installationKey.runnerToken(member);
  const runner = await startRunner({ token });
  const ready = await store.replaceStatus(AgentComputerType, {
    ...member,
    status: readyStatus(member, runner.http.url),
  });
  const claimed = await claimMember(store, ready);
  expect(claimed.metadata.generation).toBeGreaterThan(ready.status?.observedGeneration ?? 0);
  expect(readyForCurrentSpec(claimed)).toBe(true);

  const promptId = randomUUID();
  const task = await store.create(TaskType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: { name: randomUUID(), namespace: NAMESPACE },
    spec: {
      workspace: 'member-1',
      executor: 'shell',
      title: 't',
      owner: 'u',
      visibility: 'shared',
      prompts: [{ id: promptId, text: 'echo claimed', submittedAt: new Date().toISOString() }],
    },
  });
  const reconciler = new TaskReconciler({
    store,
    logger: createLogger({ level: 'silent' }),
    installationKey,
    executors: new ExecutorCatalog(),
    followers,
  });
  await reconciler.reconcile({ namespace: NAMESPACE, name: task.metadata.name });
  const operatorClient = new RunnerClient({ endpoint: runner.http.url, token });
  expect(await operatorClient.getPrompt(task.metadata.name, promptId)).toBeDefined();
});
