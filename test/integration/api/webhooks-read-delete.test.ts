// The webhook API (docs/api.md#webhooks) on a test server with an embedded store.
// This file: listing, reading and deleting webhooks, and the scopes each needs.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { WebhookRecordSchema } from '../../../api/webhook/present.js';
import { SecretType, WebhookType } from '../../../crds/index.js';
import { call, eventually } from '../../support/api-server.js';
import { configureOrganization, errorOf, namespaceOf } from './tasks-support.js';
import {
  alice,
  api,
  globex,
  PUBLIC,
  register,
  SECRET,
  useWebhooksApi,
  WebhookListSchema,
} from './webhooks-support.js';

useWebhooksApi();

describe('GET and DELETE /v1/webhooks', () => {
  let key: string;
  let ids: string[];

  beforeAll(async () => {
    key = await api.key({ org: 'listing', user: 'lee' });
    await configureOrganization(api, 'listing', (spec) => ({
      ...spec,
      limits: { ...spec.limits, webhooks: 10 },
    }));
    ids = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await register(key, { url: `${PUBLIC}/list/${i}`, events: ['task.created'] })).record.id);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // creation timestamps have seconds
    }
  });

  it('lists newest first in the list envelope, with pagination', async () => {
    const res = await call(api, '/v1/webhooks', { key });
    expect(res.status).toBe(200);
    const page = WebhookListSchema.parse(await res.json());
    expect(page).toMatchObject({ total: 3, limit: 50, offset: 0 });
    expect(page.data.map((w) => w.id)).toEqual([...ids].reverse());
    const second = WebhookListSchema.parse(
      await (await call(api, '/v1/webhooks?limit=1&offset=1', { key })).json(),
    );
    expect(second.data.map((w) => w.id)).toEqual([ids[1]]);
    expect((await call(api, '/v1/webhooks?limit=0', { key })).status).toBe(400);
  });

  it('gets one, and answers 404 for an unknown id and for a non-UUID', async () => {
    const res = await call(api, `/v1/webhooks/${ids[0] ?? ''}`, { key });
    expect(res.status).toBe(200);
    expect(WebhookRecordSchema.parse(await res.json())).toMatchObject({
      id: ids[0],
      url: `${PUBLIC}/list/0`,
    });
    for (const id of ['6f1c1c1e-0d6b-4b59-9d4a-0f3f4b1a2c3d', 'nope']) {
      const missing = await call(api, `/v1/webhooks/${id}`, { key });
      expect(missing.status).toBe(404);
      expect((await errorOf(missing)).code).toBe('not_found');
    }
  });

  it("answers 404 for another organization's webhook, and does not list it", async () => {
    const theirs = ids[0] ?? '';
    expect((await call(api, `/v1/webhooks/${theirs}`, { key: globex })).status).toBe(404);
    expect((await call(api, `/v1/webhooks/${theirs}`, { key: globex, method: 'DELETE' })).status).toBe(404);
    const page = WebhookListSchema.parse(await (await call(api, '/v1/webhooks', { key: globex })).json());
    expect(page.data.map((w) => w.id)).not.toContain(theirs);
    expect((await call(api, `/v1/webhooks/${theirs}`, { key })).status).toBe(200);
  });

  it('deletes with 204, taking the Secret along; then 404', async () => {
    const { record } = await register(key, {
      url: `${PUBLIC}/list/doomed`,
      events: ['task.failed'],
      secret: SECRET,
    });
    const secretName = `webhook-${record.id}`;
    expect(await api.store.get(SecretType, namespaceOf('listing'), secretName)).toBeDefined();
    const res = await call(api, `/v1/webhooks/${record.id}`, { key, method: 'DELETE' });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe('');
    expect((await call(api, `/v1/webhooks/${record.id}`, { key })).status).toBe(404);
    expect((await call(api, `/v1/webhooks/${record.id}`, { key, method: 'DELETE' })).status).toBe(404);
    const page = WebhookListSchema.parse(await (await call(api, '/v1/webhooks', { key })).json());
    expect(page.data.map((w) => w.id)).not.toContain(record.id);
    await eventually(
      async () => (await api.store.get(SecretType, namespaceOf('listing'), secretName)) === undefined,
    );
    expect(await api.store.get(WebhookType, namespaceOf('listing'), record.id)).toBeUndefined();
  });
});

describe('scopes', () => {
  it('lets webhooks:read list, get and read the public key, but not register or delete (403)', async () => {
    const reader = await api.key({ org: 'acme', user: 'rita', scopes: ['webhooks:read'] });
    const { record } = await register(alice, { url: `${PUBLIC}/scopes`, events: ['task.created'] });
    expect((await call(api, '/v1/webhooks', { key: reader })).status).toBe(200);
    expect((await call(api, `/v1/webhooks/${record.id}`, { key: reader })).status).toBe(200);
    expect((await call(api, '/v1/webhooks/public_key', { key: reader })).status).toBe(200);
    const post = await call(api, '/v1/webhooks', {
      key: reader,
      method: 'POST',
      body: { url: `${PUBLIC}/scopes/2`, events: ['task.created'] },
    });
    expect(post.status).toBe(403);
    expect((await errorOf(post)).code).toBe('insufficient_scopes');
    expect((await call(api, `/v1/webhooks/${record.id}`, { key: reader, method: 'DELETE' })).status).toBe(
      403,
    );
  });

  it('needs webhooks:read to read', async () => {
    const tasksOnly = await api.key({ org: 'acme', user: 'tom', scopes: ['tasks:read', 'tasks:write'] });
    for (const path of ['/v1/webhooks', '/v1/webhooks/public_key']) {
      const res = await call(api, path, { key: tasksOnly });
      expect(res.status).toBe(403);
    }
    const writer = await api.key({ org: 'acme', user: 'wes', scopes: ['webhooks:write'] });
    expect((await register(writer, { url: `${PUBLIC}/scopes/w`, events: ['task.created'] })).status).toBe(
      201,
    );
  });

  it('answers 401 without a key', async () => {
    expect((await call(api, '/v1/webhooks/public_key')).status).toBe(401);
  });
});
