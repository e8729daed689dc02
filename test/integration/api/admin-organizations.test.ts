// /v1/admin/organizations as an installation administrator's script uses it, and the scope rule
// that keeps an organization's own key (even `*`) out of it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

let api: TestApi;
let adminKey: string;

const OrganizationSchema = z.object({
  name: z.string(),
  plan: z.enum(['free', 'pro']),
  namespace: z.string(),
  limits: z.object({ agentComputers: z.number(), concurrentTasks: z.number(), webhooks: z.number() }),
});
const ErrorSchema = z.object({ error: z.object({ code: z.string() }) });

beforeAll(async () => {
  api = await startTestApi();
  adminKey = await api.key({ org: 'default', user: 'root', scopes: ['installation:admin'] });
});

afterAll(async () => {
  await api.stop();
});

describe('/v1/admin/organizations', () => {
  it('creates an organization, changes its limits and plan, lists, reads and deletes it', async () => {
    const created = await call(api, '/v1/admin/organizations', {
      key: adminKey,
      method: 'POST',
      body: { name: 'hooli', plan: 'free', limits: { agentComputers: 2 } },
    });
    expect(created.status).toBe(201);
    expect(OrganizationSchema.parse(await created.json())).toMatchObject({
      name: 'hooli',
      namespace: 'agentry-org-hooli',
      limits: { agentComputers: 2, concurrentTasks: 10, webhooks: 3 },
    });
    const patched = await call(api, '/v1/admin/organizations/hooli', {
      key: adminKey,
      method: 'PATCH',
      body: { plan: 'pro', limits: { webhooks: 5 } },
    });
    expect(OrganizationSchema.parse(await patched.json())).toMatchObject({
      plan: 'pro',
      limits: { agentComputers: 2, webhooks: 5 },
    });
    const list = z
      .object({ data: z.array(OrganizationSchema) })
      .parse(await (await call(api, '/v1/admin/organizations', { key: adminKey })).json());
    expect(list.data.map((org) => org.name)).toContain('hooli');
    expect(
      (await call(api, '/v1/admin/organizations/hooli', { key: adminKey, method: 'DELETE' })).status,
    ).toBe(204);
    expect((await call(api, '/v1/admin/organizations/hooli', { key: adminKey })).status).toBe(404);
  });

  it('answers 409 for an organization that exists', async () => {
    const body = { name: 'umbrella' };
    expect((await call(api, '/v1/admin/organizations', { key: adminKey, method: 'POST', body })).status).toBe(
      201,
    );
    const again = await call(api, '/v1/admin/organizations', { key: adminKey, method: 'POST', body });
    expect(again.status).toBe(409);
  });

  it("refuses an organization's own key with every scope (*) with 403, and changes nothing", async () => {
    const orgKey = await api.key({ org: 'acme', scopes: ['*'] });
    const res = await call(api, '/v1/admin/organizations/acme', {
      key: orgKey,
      method: 'PATCH',
      body: { limits: { agentComputers: 1000 } },
    });
    expect(res.status).toBe(403);
    expect(ErrorSchema.parse(await res.json()).error.code).toBe('insufficient_scopes');
    expect((await api.organization('acme')).spec.limits.agentComputers).toBe(10);
  });
});
