// Warm-pool claims through the REST API (docs/adr/0008-warm-pools.md), over a real embedded store:
// members are put in the store by hand, as the pool controller would make them, and made Ready as
// the operator would. A task or POST /agent-computers takes a ready member, else starts cold; an
// available member is invisible to clients.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { AgentComputerRecordSchema } from '../../../api/agent-computer/present.js';
import {
  AgentComputerType,
  POOL_CLAIMED_AT_ANNOTATION,
  POOL_CLAIMED_FOR_TASK_ANNOTATION,
  TASK_CLAIMED_WORKSPACE_ANNOTATION,
  TaskType,
  POOL_MEMBER_STATE_LABEL,
  PoolMemberStates,
  WorkspacePoolType,
} from '../../../crds/index.js';
import type { AgentComputer, WorkspacePool } from '../../../crds/index.js';
import { isClaimable } from '../../../api/workspace-pool/members.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { addPoolMember, createPool } from '../../support/pool-members.js';
import { configureOrganization, createTask, errorOf, namespaceOf, storedTask } from './tasks-support.js';
import { SseStream, shellInvocation, startWorkspaceRunner } from './tasks-sse.js';
import type { WorkspaceRunner } from './tasks-sse.js';

const ListSchema = z.object({ data: z.array(AgentComputerRecordSchema) });

const ClaimLogSchema = z.object({
  msg: z.literal('claimed a warm-pool workspace'),
  req: z.object({ id: z.string() }),
  member: z.string(),
  pool: z.string(),
  attempts: z.number(),
});

let api: TestApi;
/** The server's JSON log lines. */
const logLines: string[] = [];

beforeAll(async () => {
  api = await startTestApi({
    logLevel: 'info',
    logDestination: {
      write: (line) => {
        logLines.push(line);
      },
    },
  });
});
afterAll(async () => {
  await api.stop();
});

/** An organization of its own (tests do not share pools), its key and its default pool. */
async function organizationWithPool(org: string): Promise<{ key: string; pool: WorkspacePool }> {
  const key = await api.key({ org, user: 'ada' });
  return { key, pool: await createPool(api.store, namespaceOf(org)) };
}

/** A ready member, once the API's cache has seen it Ready (as a watch would deliver it). */
async function readyMember(pool: WorkspacePool, name: string, idleTimeout?: string): Promise<AgentComputer> {
  const member = await addPoolMember(api.store, pool, name, idleTimeout === undefined ? {} : { idleTimeout });
  await eventually(() => {
    const cached = api.readModel.agentComputers.get(member.metadata.namespace, name);
    return cached !== undefined && isClaimable(cached, {});
  });
  return member;
}

const stored = async (namespace: string, name: string): Promise<AgentComputer | undefined> =>
  api.store.get(AgentComputerType, namespace, name);

async function metricValue(outcome: string): Promise<number> {
  const text = await (await call(api, '/metrics')).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`agentry_workspace_pool_claims_total{outcome="${outcome}"}`));
  return Number(line?.split(' ').at(-1) ?? 'NaN');
}

describe('a task without workspaceId', () => {
  it('runs on the ready pool member: its workspaceId is the member', async () => {
    const { key, pool } = await organizationWithPool('claim-task');
    await readyMember(pool, 'member-1');
    const task = await createTask(api, key, { prompt: 'Fix it', executor: 'shell' });
    expect(task.workspaceId).toBe('member-1');
  });

  it("writes the claim: state claimed, claimed-at, the claimer's fields and the template's idle timeout, without the pool's owner reference", async () => {
    const { key, pool } = await organizationWithPool('claim-write');
    await readyMember(pool, 'member-1', '7m');
    const before = Date.now();
    await createTask(api, key, { prompt: 'Write it down\nplease', executor: 'shell' });
    const member = await stored(namespaceOf('claim-write'), 'member-1');
    expect(member?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Claimed);
    const claimedAt = Date.parse(member?.metadata.annotations?.[POOL_CLAIMED_AT_ANNOTATION] ?? '');
    expect(claimedAt).toBeGreaterThanOrEqual(before - 1);
    expect(member?.metadata.ownerReferences ?? []).not.toContainEqual(
      expect.objectContaining({ kind: WorkspacePoolType.kind }),
    );
    expect(member?.spec).toMatchObject({
      displayName: 'Write it down',
      owner: 'ada',
      ephemeral: true,
      idleTimeout: '7m',
    });
  });

  it('writes the task with the claim, each naming the other, so the operator runs it only once the claim is seen', async () => {
    const { key, pool } = await organizationWithPool('claim-together');
    await readyMember(pool, 'member-1');
    const task = await createTask(api, key, { prompt: 'Together', executor: 'shell' });
    const member = await stored(namespaceOf('claim-together'), 'member-1');
    const written = await api.store.get(TaskType, namespaceOf('claim-together'), task.id);
    expect(member?.metadata.annotations?.[POOL_CLAIMED_FOR_TASK_ANNOTATION]).toBe(task.id);
    expect(written?.metadata.annotations?.[TASK_CLAIMED_WORKSPACE_ANNOTATION]).toBe('member-1');
  });

  it('logs the claim with the request id, the member, its pool and the attempts it took', async () => {
    const { key, pool } = await organizationWithPool('claim-log');
    await readyMember(pool, 'member-1');
    const res = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: { prompt: 'x', executor: 'shell' },
    });
    expect(res.status).toBe(201);
    const requestId = res.headers.get('x-request-id');
    const claims = logLines
      .map((line) => ClaimLogSchema.safeParse(JSON.parse(line)))
      .flatMap((parsed) => (parsed.success && parsed.data.req.id === requestId ? [parsed.data] : []));
    expect(claims).toEqual([expect.objectContaining({ member: 'member-1', pool: 'default', attempts: 1 })]);
  });

  it('counts a claim with no ready member as empty and starts cold', async () => {
    const { key } = await organizationWithPool('claim-empty');
    const emptyBefore = await metricValue('empty');
    await createTask(api, key, { prompt: 'x', executor: 'shell' });
    expect(await metricValue('empty')).toBe(emptyBefore + 1);
  });

  it('starts cold when the only member is not Ready yet, leaving the member in the pool', async () => {
    const { key, pool } = await organizationWithPool('claim-not-ready');
    await addPoolMember(api.store, pool, 'booting', { ready: false });
    await eventually(
      () => api.readModel.agentComputers.get(namespaceOf('claim-not-ready'), 'booting') !== undefined,
    );
    const task = await createTask(api, key, { prompt: 'x', executor: 'shell' });
    expect(task.workspaceId).not.toBe('booting');
    const member = await stored(namespaceOf('claim-not-ready'), 'booting');
    expect(member?.metadata.labels?.[POOL_MEMBER_STATE_LABEL]).toBe(PoolMemberStates.Available);
  });

  it('never gets a member another claim got: a claimed member is claimed once', async () => {
    const { key, pool } = await organizationWithPool('claim-once');
    await readyMember(pool, 'member-1');
    const first = await createTask(api, key, { prompt: 'one', executor: 'shell' });
    const second = await createTask(api, key, { prompt: 'two', executor: 'shell' });
    expect(first.workspaceId).toBe('member-1');
    expect(second.workspaceId).not.toBe('member-1');
  });

  it('of N at once with one ready member: exactly one claims it, the rest start cold', async () => {
    const { key, pool } = await organizationWithPool('claim-burst');
    await readyMember(pool, 'member-1');
    const claimedBefore = await metricValue('claimed');
    const tasks = await Promise.all(
      Array.from({ length: 8 }, (_, i) => createTask(api, key, { prompt: `task ${i}`, executor: 'shell' })),
    );
    expect(tasks.filter((task) => task.workspaceId === 'member-1')).toHaveLength(1);
    expect(new Set(tasks.map((task) => task.workspaceId)).size).toBe(8);
    expect(await metricValue('claimed')).toBe(claimedBefore + 1);
  });
});

describe('POST /v1/agent-computers', () => {
  it('claims a ready member too, answering the record a cold create answers', async () => {
    const { key, pool } = await organizationWithPool('claim-ac');
    await readyMember(pool, 'member-1');
    const res = await call(api, '/v1/agent-computers', {
      key,
      method: 'POST',
      body: { name: 'Box', icon: '🛠' },
    });
    expect(res.status).toBe(201);
    const record = AgentComputerRecordSchema.parse(await res.json());
    expect(record).toMatchObject({ id: 'member-1', name: 'Box', icon: '🛠', requestedMode: 'running' });
    expect(res.headers.get('location')).toBe(record.url);
    expect((await stored(namespaceOf('claim-ac'), 'member-1'))?.spec).toMatchObject({ ephemeral: false });
  });

  it('lists a claimed member as an ordinary workspace, created when it was claimed', async () => {
    const { key, pool } = await organizationWithPool('claim-listed');
    await readyMember(pool, 'member-1');
    const before = Date.now();
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: {} });
    expect(res.status).toBe(201);
    const list = ListSchema.parse(await (await call(api, '/v1/agent-computers', { key })).json());
    expect(list.data.map((ac) => ac.id)).toEqual(['member-1']);
    expect(Date.parse(list.data[0]?.createdAt ?? '')).toBeGreaterThanOrEqual(before);
  });
});

// No operator runs here: nothing observes the claim's generation, so Ready stays as it was written
// for the generation before it. The claim changes no workload field, so that Ready still holds.
describe('a claimed member, before the operator observed the claim', () => {
  const runners: WorkspaceRunner[] = [];
  const streams: SseStream[] = [];
  afterAll(async () => {
    for (const stream of streams) await stream.close();
    for (const runner of runners) await runner.stop();
  });

  it('is ready in the answer of POST /v1/agent-computers that claimed it', async () => {
    const { key, pool } = await organizationWithPool('claim-ready');
    await readyMember(pool, 'member-1');
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'Box' } });
    expect(res.status).toBe(201);
    expect(AgentComputerRecordSchema.parse(await res.json())).toMatchObject({
      id: 'member-1',
      status: 'ready',
    });
  });

  it("streams the claiming task's events from the member's runner at once", async () => {
    const { key, pool } = await organizationWithPool('claim-stream');
    const member = await addPoolMember(api.store, pool, 'member-1', { ready: false });
    const runner = await startWorkspaceRunner(api, member.metadata.namespace ?? '', 'member-1');
    runners.push(runner);
    await eventually(() =>
      isClaimable(
        api.readModel.agentComputers.get(member.metadata.namespace ?? '', 'member-1') ?? member,
        {},
      ),
    );
    const task = await createTask(api, key, { prompt: 'echo claimed', executor: 'shell' });
    expect(task.workspaceId).toBe('member-1');
    const promptId = (await storedTask(api, 'claim-stream', task.id)).spec.prompts[0]?.id ?? '';
    // The operator's part: the dispatch (it judges readiness by the same rule).
    await runner.client.dispatchPrompt(task.id, promptId, {
      text: 'echo claimed',
      executor: shellInvocation(),
    });
    const stream = await SseStream.open(`${api.url}/v1/tasks/${task.id}/events`, { API_KEY: key });
    streams.push(stream);
    await eventually(() => stream.events().some((event) => event.eventType === 'init'), 10_000);
  });
});

describe('an available member', () => {
  it('is not in GET /v1/agent-computers', async () => {
    const { key, pool } = await organizationWithPool('hidden-list');
    await readyMember(pool, 'member-1');
    const list = ListSchema.parse(await (await call(api, '/v1/agent-computers', { key })).json());
    expect(list.data).toEqual([]);
  });

  it('answers 404 by id', async () => {
    const { key, pool } = await organizationWithPool('hidden-get');
    await readyMember(pool, 'member-1');
    expect((await call(api, '/v1/agent-computers/member-1', { key })).status).toBe(404);
  });

  it('cannot be named as a task’s workspaceId (404)', async () => {
    const { key, pool } = await organizationWithPool('hidden-task');
    await readyMember(pool, 'member-1');
    const res = await call(api, '/v1/tasks', {
      key,
      method: 'POST',
      body: { prompt: 'x', executor: 'shell', workspaceId: 'member-1' },
    });
    expect(res.status).toBe(404);
    expect(
      (await stored(namespaceOf('hidden-task'), 'member-1'))?.metadata.labels?.[POOL_MEMBER_STATE_LABEL],
    ).toBe(PoolMemberStates.Available);
  });

  it('does not count against limits.agentComputers', async () => {
    const { key, pool } = await organizationWithPool('hidden-limits');
    await configureOrganization(api, 'hidden-limits', (spec) => ({
      ...spec,
      limits: { ...spec.limits, agentComputers: 1 },
    }));
    await addPoolMember(api.store, pool, 'booting', { ready: false });
    await eventually(
      () => api.readModel.agentComputers.get(namespaceOf('hidden-limits'), 'booting') !== undefined,
    );
    const first = await call(api, '/v1/agent-computers', { key, method: 'POST', body: {} });
    expect(first.status).toBe(201);
    const second = await call(api, '/v1/agent-computers', { key, method: 'POST', body: {} });
    expect(second.status).toBe(400);
    expect((await errorOf(second)).code).toBe('limit_exceeded');
  });
});
