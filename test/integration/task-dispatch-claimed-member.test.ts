// The task controller and claimed warm-pool members. It dispatches the first prompt of a claimed
// member before the operator has observed the claim's generation: the claim changes no workload
// field, so Ready observed for the generation before still holds (crds/agent-computer/readiness.ts).
// A task without workspaceId is written at the same time as its member's claim
// (crds/workspace-pool/claim-binding.ts): it runs only once the claim that names it is seen, never
// on a member claimed for another task, and fails when its claim never came. Real embedded store, a
// real runner on loopback, the real reconciler; no AgentComputer controller runs to re-stamp Ready.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentComputerType,
  CLAIM_PENDING_BOUND_MS,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskReasons,
  TaskType,
  readyForCurrentSpec,
} from '../../crds/index.js';
import type { AgentComputer, Task } from '../../crds/index.js';
import { findCondition } from '../../crds/conditions.js';
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

let dir: string;
let store: EmbeddedStore;
let namespaces = 0;
const installationKey = new InstallationKey(randomBytes(32));
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
  const { member, runner } = await readyMember();
  const claimed = await claimMember(store, member);
  expect(claimed.metadata.generation).toBeGreaterThan(member.status?.observedGeneration ?? 0);
  expect(readyForCurrentSpec(claimed)).toBe(true);
  const promptId = randomUUID();
  const task = await taskOn(member, promptId, { withClaim: false });
  await reconcile(reconcilerAt(), task);
  expect(await runner.getPrompt(task.metadata.name, promptId)).toBeDefined();
});

/** A ready member of a new pool in a namespace of its own, its runner on loopback. */
async function readyMember(): Promise<{ member: AgentComputer; runner: RunnerClient }> {
  const namespace = `agentry-org-binding-${String(++namespaces)}`;
  const pool = await createPool(store, namespace);
  const member = await addPoolMember(store, pool, 'member-1', { ready: false });
  const token = installationKey.runnerToken(member);
  const runner = await startRunner({ token });
  const ready = await store.replaceStatus(AgentComputerType, {
    ...member,
    status: readyStatus(member, runner.http.url),
  });
  return { member: ready, runner: new RunnerClient({ endpoint: runner.http.url, token }) };
}

/** A task on the member: as POST /v1/tasks writes it with the member's claim, or given its id. */
function taskOn(member: AgentComputer, promptId: string, options = { withClaim: true }): Promise<Task> {
  return store.create(TaskType, {
    apiVersion: 'agentry.dev/v1alpha1',
    kind: 'Task',
    metadata: {
      name: randomUUID(),
      namespace: member.metadata.namespace,
      ...(options.withClaim
        ? { annotations: { [TASK_CLAIMED_WORKSPACE_ANNOTATION]: member.metadata.name } }
        : {}),
    },
    spec: {
      workspace: member.metadata.name,
      executor: 'shell',
      title: 't',
      owner: 'u',
      visibility: 'shared',
      prompts: [{ id: promptId, text: 'echo bound', submittedAt: new Date().toISOString() }],
    },
  });
}

const reconcilerAt = (now: () => Date = () => new Date()): TaskReconciler =>
  new TaskReconciler({
    store,
    logger: createLogger({ level: 'silent' }),
    installationKey,
    executors: new ExecutorCatalog(),
    followers,
    now,
  });

const reconcile = (reconciler: TaskReconciler, task: Task) =>
  reconciler.reconcile({ namespace: task.metadata.namespace, name: task.metadata.name });

describe('a task written with the claim of its warm-pool member', () => {
  it('waits, writing nothing, while its member is still available, and runs once the claim naming it is written', async () => {
    const { member, runner } = await readyMember();
    const promptId = randomUUID();
    const task = await taskOn(member, promptId);
    const reconciler = reconcilerAt();
    const waiting = await reconcile(reconciler, task);
    expect(waiting?.requeueAfterMs).toBeGreaterThan(0);
    expect(await runner.getPrompt(task.metadata.name, promptId)).toBeUndefined();
    expect((await store.get(TaskType, task.metadata.namespace, task.metadata.name))?.status).toBeUndefined();

    await claimMember(store, member, { displayName: 't' }, task.metadata.name);
    await reconcile(reconciler, task);
    expect(await runner.getPrompt(task.metadata.name, promptId)).toBeDefined();
  });

  it('never runs on a member claimed for another task, and fails as WorkspaceClaimLost once the bound has passed', async () => {
    const { member, runner } = await readyMember();
    await claimMember(store, member, { displayName: 'theirs' }, 'another-task');
    const promptId = randomUUID();
    const task = await taskOn(member, promptId);
    expect((await reconcile(reconcilerAt(), task))?.requeueAfterMs).toBeGreaterThan(0);
    expect((await store.get(TaskType, task.metadata.namespace, task.metadata.name))?.status).toBeUndefined();

    const later = reconcilerAt(() => new Date(Date.now() + CLAIM_PENDING_BOUND_MS + 1_000));
    await reconcile(later, task);
    const failed = await store.get(TaskType, task.metadata.namespace, task.metadata.name);
    expect(failed?.status?.status).toBe('failed');
    expect(findCondition(failed?.status?.conditions, 'WorkspaceReady')?.reason).toBe(
      TaskReasons.WorkspaceClaimLost,
    );
    expect(await runner.getPrompt(task.metadata.name, promptId)).toBeUndefined();
  });
});
