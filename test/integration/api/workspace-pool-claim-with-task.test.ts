// POST /v1/tasks without workspaceId writes the member's claim and the Task at the same time
// (crds/workspace-pool/claim-binding.ts). When one of the two writes fails or the claim loses, what
// the other wrote is undone: no task is left on a member it did not get, and no claimed member is
// left without its task. A real embedded store, with a wrapper that makes one write fail or lose.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  AgentComputerType,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  TaskType,
} from '../../../crds/index.js';
import type { AgentComputer, KubeObject, ResourceType } from '../../../crds/index.js';
import { isClaimable } from '../../../api/workspace-pool/members.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { StoreError } from '../../../platform/store/types.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { DelegatingStore } from '../../support/delegating-store.js';
import { addPoolMember, claimMember, createPool } from '../../support/pool-members.js';
import { namespaceOf } from './tasks-support.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });

type Fault = 'task write fails' | 'claim fails' | 'claim loses';

/** Makes the next claim or Task write of the API fail, or lose its claim to another claimer. */
class FaultyStore extends DelegatingStore {
  next: Fault | undefined;

  constructor(private readonly embedded: EmbeddedStore) {
    super(embedded);
  }

  override async create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    if (type.kind === TaskType.kind && this.take('task write fails'))
      throw new StoreError('Unavailable', 'the API server is not answering (a test fault)');
    return super.create(type, object);
  }

  override async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    const claims = object.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === PoolMemberStates.Claimed;
    if (type.kind === AgentComputerType.kind && claims && this.take('claim fails'))
      throw new StoreError('Unavailable', 'the API server is not answering (a test fault)');
    if (type.kind === AgentComputerType.kind && claims && this.take('claim loses')) {
      const current = await this.embedded.get(
        AgentComputerType,
        object.metadata.namespace,
        object.metadata.name,
      );
      if (current !== undefined)
        await claimMember(this.embedded, current, { displayName: 'theirs' }, 'their-task');
    }
    return super.replace(type, object);
  }

  private take(fault: Fault): boolean {
    if (this.next !== fault) return false;
    this.next = undefined;
    return true;
  }
}

let dir: string;
let embedded: EmbeddedStore;
let store: FaultyStore;
let api: TestApi;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-claim-with-task-'));
  embedded = await EmbeddedStore.open(join(dir, 'store'));
  store = new FaultyStore(embedded);
  api = await startTestApi({ store });
});
afterAll(async () => {
  await api.stop();
  await embedded.close();
  await rm(dir, { recursive: true, force: true });
});

/** An organization of its own with one ready member the API's cache has seen; its key. */
async function organizationWithMember(org: string): Promise<{ key: string; member: AgentComputer }> {
  const key = await api.key({ org, user: 'ada' });
  const pool = await createPool(embedded, namespaceOf(org));
  const member = await addPoolMember(embedded, pool, 'member-1');
  await eventually(() => {
    const cached = api.readModel.agentComputers.get(namespaceOf(org), 'member-1');
    return cached !== undefined && isClaimable(cached, {});
  });
  return { key, member };
}

const postTask = (key: string) =>
  call(api, '/v1/tasks', { key, method: 'POST', body: { prompt: 'x', executor: 'shell' } });

const tasksIn = async (org: string): Promise<string[]> =>
  (await embedded.list(TaskType, { namespace: namespaceOf(org) })).items.map((task) => task.metadata.name);

describe('a task written with its claim', () => {
  it('takes the claimed member with it when the task cannot be written', async () => {
    const { key } = await organizationWithMember('claim-task-fails');
    store.next = 'task write fails';
    const res = await postTask(key);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await tasksIn('claim-task-fails')).toEqual([]);
    expect(
      await embedded.get(AgentComputerType, namespaceOf('claim-task-fails'), 'member-1'),
    ).toBeUndefined();
  });

  it('takes the task with it when the claim fails, and leaves the member in the pool', async () => {
    const { key } = await organizationWithMember('claim-fails');
    store.next = 'claim fails';
    const res = await postTask(key);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await tasksIn('claim-fails')).toEqual([]);
    const member = await embedded.get(AgentComputerType, namespaceOf('claim-fails'), 'member-1');
    expect(member?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Available);
  });

  it('removes the task of a claim that lost and starts the task again, cold, when no other member is ready', async () => {
    const { key } = await organizationWithMember('claim-loses');
    store.next = 'claim loses';
    const res = await postTask(key);
    expect(res.status).toBe(201);
    const { id, workspaceId } = CreatedSchema.parse(await res.json());
    expect(workspaceId).not.toBe('member-1');
    expect(await tasksIn('claim-loses')).toEqual([id]);
  });
});
