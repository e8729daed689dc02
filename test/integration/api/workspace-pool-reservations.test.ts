// Claims reserved ahead (crds/workspace-pool/reservation.ts): an API process reserves a serving
// member while nobody waits, so that a task without workspaceId then costs one write, the Task
// under the reservation's name; the rest of the claim is written after the answer. A real embedded
// store, wrapped to hold the claim's completion back when a test needs to see the moment before it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import {
  AgentComputerType,
  CLAIM_QUIET_MS,
  OWNER_KEY_LABEL,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  POOL_MEMBER_STATE_LABEL,
  POOL_RESERVED_BY_ANNOTATION,
  POOL_RESERVED_UNTIL_ANNOTATION,
  PoolMemberStates,
  TaskType,
  reservationOf,
  reservedMember,
} from '../../../crds/index.js';
import type { AgentComputer, KubeObject, ResourceType } from '../../../crds/index.js';
import { isClaimable } from '../../../api/workspace-pool/members.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { DelegatingStore } from '../../support/delegating-store.js';
import { addPoolMember, createPool } from '../../support/pool-members.js';
import { readyStatus } from '../../support/ready-status.js';
import { namespaceOf } from './tasks-support.js';

const HOLDER = 'api-under-test';
const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const WorkspaceSchema = z.object({ id: z.string(), name: z.string() });

/** Counts the writes the API sends, and can hold back the write that completes a claim. */
class WatchedStore extends DelegatingStore {
  writes: string[] = [];
  private held: Promise<void> | undefined;
  private releaseHeld: (() => void) | undefined;

  hold(): void {
    this.held = new Promise((resolve) => (this.releaseHeld = resolve));
  }

  release(): void {
    this.releaseHeld?.();
    this.held = undefined;
  }

  override async create<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.writes.push(`create ${type.kind}`);
    return super.create(type, object);
  }

  override async replace<T extends KubeObject>(type: ResourceType<T>, object: T): Promise<T> {
    this.writes.push(`replace ${type.kind}`);
    const completes = object.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === PoolMemberStates.Claimed;
    if (type.kind === AgentComputerType.kind && completes && this.held !== undefined) await this.held;
    return super.replace(type, object);
  }
}

let dir: string;
let embedded: EmbeddedStore;
let store: WatchedStore;
let api: TestApi;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agentry-reservations-'));
  embedded = await EmbeddedStore.open(join(dir, 'store'));
  store = new WatchedStore(embedded);
  api = await startTestApi({ store, poolReservations: HOLDER });
});
afterAll(async () => {
  store.release();
  await api.stop();
  await embedded.close();
  await rm(dir, { recursive: true, force: true });
});

/** An organization of its own with `count` ready members the API's cache has seen; its key. */
async function organizationWithMembers(org: string, count: number, on: TestApi = api): Promise<string> {
  const key = await on.key({ org, user: 'ada' });
  const pool = await createPool(on.store, namespaceOf(org));
  for (let i = 1; i <= count; i++) await addPoolMember(on.store, pool, `member-${String(i)}`);
  await eventually(() =>
    Array.from({ length: count }, (_, i) => `member-${String(i + 1)}`).every((name) => {
      const cached = on.readModel.agentComputers.get(namespaceOf(org), name);
      return cached !== undefined && isClaimable(cached, {});
    }),
  );
  return key;
}

const postTask = (key: string, on: TestApi = api) =>
  call(on, '/v1/tasks', { key, method: 'POST', body: { prompt: 'Fix the build', executor: 'shell' } });

const membersOf = async (org: string, on: TestApi = api): Promise<AgentComputer[]> =>
  (await on.store.list(AgentComputerType, { namespace: namespaceOf(org) })).items;

const reservedIn = async (org: string, on: TestApi = api): Promise<AgentComputer[]> =>
  (await membersOf(org, on)).filter((ac) => reservationOf(ac) !== undefined);

/** The organization's one reservation, once this API process has written it (and its cache seen it). */
async function reservation(org: string): Promise<AgentComputer> {
  let found: AgentComputer | undefined;
  await eventually(async () => {
    [found] = await reservedIn(org);
    return (
      found !== undefined &&
      reservationOf(api.readModel.agentComputers.get(namespaceOf(org), found.metadata.name) ?? found) !==
        undefined
    );
  }, 10_000);
  if (found === undefined) throw new Error('no reservation');
  return found;
}

describe('an API process reserving claims ahead', () => {
  it("reserves one serving member a second after a task's claim, while another stays for other claimers", async () => {
    const key = await organizationWithMembers('reserve-one', 3);
    const started = Date.now();
    expect((await postTask(key)).status).toBe(201);
    const reserved = await reservation('reserve-one');
    expect(await reservedIn('reserve-one')).toHaveLength(1);
    const annotations = reserved.metadata.annotations ?? {};
    expect(annotations[POOL_RESERVED_BY_ANNOTATION]).toBe(HOLDER);
    expect(annotations[POOL_CLAIMED_FOR_TASK_ANNOTATION]).toMatch(/^[0-9a-f-]{36}$/);
    const until = Date.parse(annotations[POOL_RESERVED_UNTIL_ANNOTATION] ?? '');
    expect(until).toBeGreaterThan(started + 4 * 60_000);
    expect(until).toBeLessThan(Date.now() + 6 * 60_000);
    expect(reserved.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Available);
  });

  it('reports how many reservations it holds in its metrics', async () => {
    const key = await organizationWithMembers('reserve-metric', 3);
    const held = async (): Promise<number> => {
      const text = await (await call(api, '/metrics')).text();
      return Number(/^agentry_workspace_pool_reservations (\d+)$/m.exec(text)?.[1] ?? NaN);
    };
    const before = await held();
    expect((await postTask(key)).status).toBe(201);
    await reservation('reserve-metric');
    expect(await held()).toBe(before + 1);
  });

  it("never reserves an organization's last serving member", async () => {
    const key = await organizationWithMembers('reserve-none', 2);
    expect((await postTask(key)).status).toBe(201);
    // Past the second a reservation waits, and two more tries.
    await sleep(CLAIM_QUIET_MS * 3.5);
    expect(await reservedIn('reserve-none')).toEqual([]);
  });

  it("writes a task's claim with the task alone: the task takes the reservation's name and member", async () => {
    const key = await organizationWithMembers('reserve-use', 3);
    expect((await postTask(key)).status).toBe(201);
    const reserved = await reservation('reserve-use');
    store.hold();
    store.writes = [];
    const res = await postTask(key);
    const writesBeforeAnswer = [...store.writes];
    expect(res.status).toBe(201);
    const { id, workspaceId } = CreatedSchema.parse(await res.json());
    expect(id).toBe(reserved.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION]);
    expect(workspaceId).toBe(reserved.metadata.name);
    // Answered while the rest of the claim was still held back.
    expect(writesBeforeAnswer.filter((write) => write === `create ${TaskType.kind}`)).toHaveLength(1);
    const meanwhile = await embedded.get(AgentComputerType, namespaceOf('reserve-use'), workspaceId);
    expect(meanwhile?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Available);
    store.release();
  });

  it('completes the claim after the answer: claimed for the task, the claimer its owner, no reservation left', async () => {
    const key = await organizationWithMembers('reserve-complete', 3);
    expect((await postTask(key)).status).toBe(201);
    await reservation('reserve-complete');
    const { id, workspaceId } = CreatedSchema.parse(await (await postTask(key)).json());
    let claimed: AgentComputer | undefined;
    await eventually(async () => {
      claimed = await embedded.get(AgentComputerType, namespaceOf('reserve-complete'), workspaceId);
      return claimed?.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === PoolMemberStates.Claimed;
    });
    const annotations = claimed?.metadata.annotations ?? {};
    expect(annotations[POOL_CLAIMED_FOR_TASK_ANNOTATION]).toBe(id);
    expect(annotations[POOL_RESERVED_BY_ANNOTATION]).toBeUndefined();
    expect(annotations[POOL_RESERVED_UNTIL_ANNOTATION]).toBeUndefined();
    expect(claimed?.metadata.labels?.[OWNER_KEY_LABEL]).toBeDefined();
    expect(claimed?.metadata.ownerReferences).toBeUndefined();
    expect(claimed?.spec).toMatchObject({ displayName: 'Fix the build', owner: 'ada', ephemeral: true });
  });

  it("shows the task's workspace as claimed at once, before the rest of its claim is written", async () => {
    const key = await organizationWithMembers('reserve-lookup', 3);
    expect((await postTask(key)).status).toBe(201);
    await reservation('reserve-lookup');
    store.hold();
    try {
      const { workspaceId } = CreatedSchema.parse(await (await postTask(key)).json());
      const res = await call(api, `/v1/agent-computers/${workspaceId}`, { key });
      expect(res.status).toBe(200);
      expect(WorkspaceSchema.parse(await res.json())).toMatchObject({
        id: workspaceId,
        name: 'Fix the build',
      });
      const stored = await embedded.get(AgentComputerType, namespaceOf('reserve-lookup'), workspaceId);
      expect(stored?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Available);
    } finally {
      store.release();
    }
  });
});

describe("a reserved member's runner", () => {
  it('is asked for its health by the holder, which keeps that connection for the task to come', async () => {
    const asked: { path: string; authorization: string | undefined }[] = [];
    const runner = createServer((req, res) => {
      asked.push({ path: req.url ?? '', authorization: req.headers.authorization });
      res.setHeader('content-type', 'application/json');
      res.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => runner.listen(0, '127.0.0.1', resolve));
    try {
      const address = runner.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      const endpoint = `http://127.0.0.1:${String(address.port)}`;
      const key = await organizationWithMembers('reserve-warm', 3);
      for (const member of await membersOf('reserve-warm'))
        await embedded.replaceStatus(AgentComputerType, { ...member, status: readyStatus(member, endpoint) });
      await eventually(
        () =>
          api.readModel.agentComputers.get(namespaceOf('reserve-warm'), 'member-3')?.status?.endpoint ===
          endpoint,
      );
      expect((await postTask(key)).status).toBe(201);
      const reserved = await reservation('reserve-warm');
      await eventually(() => asked.some((request) => request.path === '/healthz'));
      const token = api.installationKey.runnerToken(reserved);
      expect(asked).toContainEqual({ path: '/healthz', authorization: `Bearer ${token}` });
    } finally {
      runner.closeAllConnections();
      await new Promise((resolve) => runner.close(resolve));
    }
  });
});

describe('a member another API process reserved', () => {
  /** An organization with two ready members, the first reserved by another process. */
  async function withForeignReservation(org: string): Promise<string> {
    const key = await organizationWithMembers(org, 2);
    const member = await embedded.get(AgentComputerType, namespaceOf(org), 'member-1');
    if (member === undefined) throw new Error('no member');
    const until = new Date(Date.now() + 5 * 60_000);
    await embedded.replace(AgentComputerType, reservedMember(member, 'another-api', 'their-task', until));
    await eventually(() => {
      const cached = api.readModel.agentComputers.get(namespaceOf(org), 'member-1');
      return cached !== undefined && reservationOf(cached) !== undefined;
    });
    return key;
  }

  it('is never claimed by POST /agent-computers, which takes another or starts cold', async () => {
    const key = await withForeignReservation('foreign-ac');
    const post = () => call(api, '/v1/agent-computers', { key, method: 'POST', body: {} });
    const first = WorkspaceSchema.parse(await (await post()).json());
    const second = WorkspaceSchema.parse(await (await post()).json());
    expect(first.id).toBe('member-2');
    expect(second.id).not.toBe('member-1');
    const reserved = await embedded.get(AgentComputerType, namespaceOf('foreign-ac'), 'member-1');
    expect(reserved === undefined ? undefined : reservationOf(reserved)?.holder).toBe('another-api');
  });

  it('is never claimed by a task of this process, which holds no reservation of it', async () => {
    const key = await withForeignReservation('foreign-task');
    const first = CreatedSchema.parse(await (await postTask(key)).json());
    const second = CreatedSchema.parse(await (await postTask(key)).json());
    expect([first.workspaceId, second.workspaceId]).not.toContain('member-1');
    expect(await tasksNamed('foreign-task', 'their-task')).toBeUndefined();
  });
});

const tasksNamed = (org: string, name: string) => embedded.get(TaskType, namespaceOf(org), name);

describe('an API process that stops', () => {
  it('writes the rest of the claims it handed out before it stops', async () => {
    const other = await startTestApi({ poolReservations: 'api-stopping-early' });
    try {
      const key = await organizationWithMembers('reserve-flush', 3, other);
      expect((await postTask(key, other)).status).toBe(201);
      await eventually(async () => (await reservedIn('reserve-flush', other)).length === 1, 10_000);
      const [reserved] = await reservedIn('reserve-flush', other);
      const { id, workspaceId } = CreatedSchema.parse(await (await postTask(key, other)).json());
      expect(id).toBe(reserved?.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION]);
      await other.poolReservations?.close();
      const member = await other.store.get(AgentComputerType, namespaceOf('reserve-flush'), workspaceId);
      expect(member?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Claimed);
    } finally {
      await other.stop();
    }
  });

  it('gives back to the pool the reservation it never handed out', async () => {
    const other = await startTestApi({ poolReservations: 'api-stopping' });
    try {
      const key = await organizationWithMembers('reserve-release', 3, other);
      expect((await postTask(key, other)).status).toBe(201);
      await eventually(async () => (await reservedIn('reserve-release', other)).length === 1, 10_000);
      await other.poolReservations?.close();
      const members = await membersOf('reserve-release', other);
      expect(members.filter((ac) => reservationOf(ac) !== undefined)).toEqual([]);
      const available = members.filter(
        (ac) => ac.metadata.labels?.[POOL_MEMBER_STATE_LABEL] === PoolMemberStates.Available,
      );
      expect(available).toHaveLength(2);
      for (const ac of available)
        expect(ac.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION]).toBeUndefined();
    } finally {
      await other.stop();
    }
  });
});
