// A claim reserved ahead whose API process stopped without releasing it (crds/workspace-pool/
// reservation.ts): the operator settles it once it has expired. One no task took is deleted (never
// returned to the pool) and replaced; one whose task was written becomes that task's claimed
// workspace. The real operator over the embedded store, members as real runner processes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentComputerType,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_LABEL,
  POOL_MEMBER_STATE_LABEL,
  POOL_RESERVED_BY_ANNOTATION,
  PoolMemberStates,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskSpecSchema,
  TaskType,
  apiVersionOf,
  reservedMember,
} from '../../crds/index.js';
import type { AgentComputer } from '../../crds/index.js';
import { isTrueForGeneration } from '../../crds/conditions.js';
import type { RunningOperator } from '../../operator/operator.js';
import type { ProcessRuntime } from '../../operator/runtimes/process.js';
import { EmbeddedStore } from '../../platform/store/embedded.js';
import { createPool } from '../support/pool-members.js';
import { startProcessOperator, stopAfterPools } from '../support/process-operator.js';
import { until } from '../support/until.js';

const READY_MS = 90_000;
let dir: string;
let store: EmbeddedStore;
let runtime: ProcessRuntime;
let operator: RunningOperator;
let namespaces = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-expired-reservations-'));
  store = await EmbeddedStore.open(join(dir, 'store'));
  ({ operator, runtime } = await startProcessOperator(store, dir));
}, 60_000);

afterAll(async () => {
  await stopAfterPools(store, { operator, runtime }, dir);
}, 90_000);

const freshNamespace = (): string => `agentry-org-reservations-${String(++namespaces)}`;

const membersOf = async (namespace: string): Promise<AgentComputer[]> =>
  (await store.list(AgentComputerType, { namespace, labelSelector: `${POOL_LABEL}=warm` })).items;

/** A pool of one ready member; that member reserved by an API process that is gone, expired a minute ago. */
async function expiredReservation(namespace: string, task: string): Promise<AgentComputer> {
  await createPool(store, namespace, { name: 'warm', minReady: 1 });
  const member = await until(
    'a ready member',
    async () => (await membersOf(namespace)).find((ac) => isTrueForGeneration(ac, 'Ready')),
    READY_MS,
  );
  const expired = new Date(Date.now() - 60_000);
  return store.replace(AgentComputerType, reservedMember(member, 'a-stopped-api', task, expired));
}

describe('an expired reservation', () => {
  it('that no task took is deleted, not returned to the pool, and the pool makes another member', async () => {
    const namespace = freshNamespace();
    const reserved = await expiredReservation(namespace, 'never-written');
    await until(
      'the reserved member deleted',
      async () =>
        (await store.get(AgentComputerType, namespace, reserved.metadata.name)) === undefined
          ? true
          : undefined,
      READY_MS,
    );
    const replacement = await until(
      'another member',
      async () => (await membersOf(namespace)).find((ac) => ac.metadata.name !== reserved.metadata.name),
      READY_MS,
    );
    expect(replacement.metadata.annotations?.[POOL_RESERVED_BY_ANNOTATION]).toBeUndefined();
  }, 180_000);

  it("whose task was written becomes that task's workspace, its claim completed from the task", async () => {
    const namespace = freshNamespace();
    await createPool(store, namespace, { name: 'warm', minReady: 1 });
    const member = await until(
      'a ready member',
      async () => (await membersOf(namespace)).find((ac) => isTrueForGeneration(ac, 'Ready')),
      READY_MS,
    );
    await store.create(TaskType, {
      apiVersion: apiVersionOf(TaskType),
      kind: TaskType.kind,
      metadata: {
        name: 'their-task',
        namespace,
        annotations: { [TASK_CLAIMED_WORKSPACE_ANNOTATION]: member.metadata.name },
      },
      spec: TaskSpecSchema.parse({
        workspace: member.metadata.name,
        executor: 'shell',
        title: 'Their task',
        owner: 'grace',
        prompts: [
          { id: '0b5e4a3c-2f1d-4c8e-9a7b-6d5c4b3a2f10', text: 'true', submittedAt: new Date().toISOString() },
        ],
      }),
    });
    const fresh = (await store.get(AgentComputerType, namespace, member.metadata.name)) ?? member;
    await store.replace(
      AgentComputerType,
      reservedMember(fresh, 'a-stopped-api', 'their-task', new Date(Date.now() - 60_000)),
    );
    const claimed = await until(
      'the claim completed',
      async () => {
        const ac = await store.get(AgentComputerType, namespace, member.metadata.name);
        return ac?.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === PoolMemberStates.Claimed ? ac : undefined;
      },
      READY_MS,
    );
    expect(claimed.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION]).toBe('their-task');
    expect(claimed.metadata.annotations?.[POOL_RESERVED_BY_ANNOTATION]).toBeUndefined();
    expect(claimed.spec).toMatchObject({ displayName: 'Their task', owner: 'grace', ephemeral: true });
  }, 180_000);
});
