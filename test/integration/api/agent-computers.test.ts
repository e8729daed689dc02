import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { AgentComputerRecordSchema } from '../../../api/agent-computer/present.js';
import { AgentComputerType, OrganizationType } from '../../../crds/index.js';
import { call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

const ListSchema = z.object({
  data: z.array(AgentComputerRecordSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});

let api: TestApi;
let acme: string;
let globex: string;

beforeAll(async () => {
  api = await startTestApi();
  acme = await api.key({ org: 'acme' });
  globex = await api.key({ org: 'globex' });
});
afterAll(async () => {
  await api.stop();
});

async function create(key: string, body: unknown): Promise<z.infer<typeof AgentComputerRecordSchema>> {
  const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body });
  expect(res.status).toBe(201);
  return AgentComputerRecordSchema.parse(await res.json());
}

describe('agent computers', () => {
  it('creates one with 201, status provisioning, a Location header and a stored resource', async () => {
    const res = await call(api, '/v1/agent-computers', {
      key: acme,
      method: 'POST',
      body: { name: 'Build box', icon: '🛠' },
    });
    expect(res.status).toBe(201);
    const record = AgentComputerRecordSchema.parse(await res.json());
    expect(record).toMatchObject({
      name: 'Build box',
      icon: '🛠',
      status: 'provisioning',
      sandboxId: null,
      provisionError: null,
    });
    expect(res.headers.get('location')).toBe(record.url);
    const stored = await api.store.get(AgentComputerType, 'agentry-org-acme', record.id);
    expect(stored?.spec).toMatchObject({
      displayName: 'Build box',
      owner: 'alice',
      operatingMode: 'Running',
    });
  });

  it('names it "Agent Computer" by default', async () => {
    expect((await create(acme, {})).name).toBe('Agent Computer');
  });

  it('gets one by id with timestamps in milliseconds', async () => {
    const made = await create(acme, { name: 'one' });
    const res = await call(api, `/v1/agent-computers/${made.id}`, { key: acme });
    expect(res.status).toBe(200);
    const record = AgentComputerRecordSchema.parse(await res.json());
    expect(record.id).toBe(made.id);
    expect(record.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("answers 404 for another organization's agent computer", async () => {
    const theirs = await create(globex, { name: 'theirs' });
    const res = await call(api, `/v1/agent-computers/${theirs.id}`, { key: acme });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('answers 404 for an id that is not a UUID', async () => {
    expect((await call(api, '/v1/agent-computers/..%2F..%2Fsecrets', { key: acme })).status).toBe(404);
  });

  it("lists only the caller's organization, newest first, in the list envelope", async () => {
    const list = ListSchema.parse(await (await call(api, '/v1/agent-computers', { key: acme })).json());
    expect(list.total).toBeGreaterThan(0);
    expect(list.data.every((record) => record.name !== 'theirs')).toBe(true);
    const times = list.data.map((record) => record.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    expect({ limit: list.limit, offset: list.offset }).toEqual({ limit: 50, offset: 0 });
  });

  it('pages with limit and offset', async () => {
    const all = ListSchema.parse(
      await (await call(api, '/v1/agent-computers?limit=100', { key: acme })).json(),
    );
    const page = ListSchema.parse(
      await (await call(api, '/v1/agent-computers?limit=1&offset=1', { key: acme })).json(),
    );
    expect(page.total).toBe(all.total);
    expect(page.data.map((record) => record.id)).toEqual(all.data.slice(1, 2).map((record) => record.id));
  });

  it('answers 400 limit_exceeded at the organization limit and creates nothing', async () => {
    const org = await api.organization('tiny');
    await api.store.replace(OrganizationType, {
      ...org,
      spec: { ...org.spec, limits: { ...org.spec.limits, agentComputers: 1 } },
    });
    const key = await api.key({ org: 'tiny' });
    await eventually(
      () => api.readModel.organizations.get(undefined, 'tiny')?.spec.limits.agentComputers === 1,
    );
    await create(key, {});
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: {} });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('limit_exceeded');
    expect((await api.store.list(AgentComputerType, { namespace: 'agentry-org-tiny' })).items).toHaveLength(
      1,
    );
  });
});

describe('agent computer lifecycle endpoints', () => {
  it('stop answers 202 and sets the intent to Hibernated, clearing an idle-timeout mark', async () => {
    const made = await create(acme, { name: 'sleepy' });
    const stored = await api.store.get(AgentComputerType, 'agentry-org-acme', made.id);
    if (stored === undefined) throw new Error('missing');
    await api.store.replace(AgentComputerType, {
      ...stored,
      metadata: { ...stored.metadata, annotations: { 'agentry.dev/hibernated-by': 'idle-timeout' } },
    });
    const res = await call(api, `/v1/agent-computers/${made.id}/stop`, { key: acme, method: 'POST' });
    expect(res.status).toBe(202);
    expect(AgentComputerRecordSchema.parse(await res.json()).id).toBe(made.id);
    const after = await api.store.get(AgentComputerType, 'agentry-org-acme', made.id);
    expect(after?.spec.operatingMode).toBe('Hibernated');
    expect(after?.metadata.annotations?.['agentry.dev/hibernated-by']).toBeUndefined();
  });

  it('start answers 202 and sets the intent back to Running', async () => {
    const made = await create(acme, { name: 'waking' });
    await call(api, `/v1/agent-computers/${made.id}/stop`, { key: acme, method: 'POST' });
    const res = await call(api, `/v1/agent-computers/${made.id}/start`, { key: acme, method: 'POST' });
    expect(res.status).toBe(202);
    expect((await api.store.get(AgentComputerType, 'agentry-org-acme', made.id))?.spec.operatingMode).toBe(
      'Running',
    );
  });

  it('keeps a field another writer set after the API cached the object (fresh read, versioned replace)', async () => {
    const made = await create(acme, { name: 'contended' });
    const before = await api.store.get(AgentComputerType, 'agentry-org-acme', made.id);
    if (before === undefined) throw new Error('missing');
    // The operator (or kubectl) writes meanwhile; the API's stale-free retry must keep this label.
    await api.store.replace(AgentComputerType, {
      ...before,
      metadata: { ...before.metadata, labels: { team: 'core' } },
    });
    expect(
      (await call(api, `/v1/agent-computers/${made.id}/stop`, { key: acme, method: 'POST' })).status,
    ).toBe(202);
    const after = await api.store.get(AgentComputerType, 'agentry-org-acme', made.id);
    expect(after?.metadata.labels).toMatchObject({ team: 'core' });
    expect(after?.spec.operatingMode).toBe('Hibernated');
  });

  it('delete answers 204, and the agent computer is gone from reads', async () => {
    const made = await create(acme, { name: 'doomed' });
    expect((await call(api, `/v1/agent-computers/${made.id}`, { key: acme, method: 'DELETE' })).status).toBe(
      204,
    );
    await eventually(
      async () => (await call(api, `/v1/agent-computers/${made.id}`, { key: acme })).status === 404,
    );
  });

  it("cannot stop, start or delete another organization's agent computer", async () => {
    const theirs = await create(globex, { name: 'not yours' });
    for (const [method, path] of [
      ['POST', 'stop'],
      ['POST', 'start'],
      ['DELETE', ''],
    ] as const) {
      const res = await call(api, `/v1/agent-computers/${theirs.id}${path === '' ? '' : `/${path}`}`, {
        key: acme,
        method,
      });
      expect(res.status).toBe(404);
    }
    expect(
      (await api.store.get(AgentComputerType, 'agentry-org-globex', theirs.id))?.spec.operatingMode,
    ).toBe('Running');
  });
});
