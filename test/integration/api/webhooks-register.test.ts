// The webhook API (docs/api.md#webhooks) on a test server with an embedded store.
// This file: registering a webhook, its validation and limits.
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretType, secretValue } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { call, startTestApi } from '../../support/api-server.js';
import {
  ISO_MILLIS,
  configureOrganization,
  errorOf,
  interceptingStore,
  namespaceOf,
} from './tasks-support.js';
import {
  alice,
  api,
  PUBLIC,
  refusal,
  register,
  SECRET,
  storedWebhook,
  useWebhooksApi,
  WebhookListSchema,
  webhooksOf,
} from './webhooks-support.js';

useWebhooksApi();

describe('POST /v1/webhooks', () => {
  it('answers 201 with the contract shape and Location, and stores a Webhook and its Secret', async () => {
    const { status, record, text, location } = await register(alice, {
      url: `${PUBLIC}/hooks/full`,
      events: ['task.completed', 'task.failed', 'task.completed'],
      description: 'CI notifications',
      secret: SECRET,
    });
    expect(status).toBe(201);
    expect(Object.keys(JSON.parse(text) as object).sort()).toEqual([
      'createdAt',
      'description',
      'events',
      'failureCount',
      'hasSecret',
      'id',
      'isActive',
      'lastTriggeredAt',
      'url',
    ]);
    expect(record).toMatchObject({
      url: `${PUBLIC}/hooks/full`,
      events: ['task.completed', 'task.failed'],
      description: 'CI notifications',
      hasSecret: true,
      isActive: true,
      lastTriggeredAt: null,
      failureCount: 0,
    });
    expect(record.createdAt).toMatch(ISO_MILLIS);
    expect(location).toBe(`http://agentry.test/v1/webhooks/${record.id}`);
    expect(text).not.toContain(SECRET);

    const webhook = await storedWebhook('acme', record.id);
    expect(webhook.spec).toEqual({
      url: `${PUBLIC}/hooks/full`,
      events: ['task.completed', 'task.failed'],
      description: 'CI notifications',
      owner: 'alice',
      secretRef: { name: `webhook-${record.id}` },
    });
    expect(JSON.stringify(webhook)).not.toContain(SECRET);

    const secret = await api.store.get(SecretType, namespaceOf('acme'), `webhook-${record.id}`);
    expect(secret?.type).toBe('agentry.dev/webhook-secret');
    expect(
      secretValue(secret ?? { apiVersion: 'v1', kind: 'Secret', metadata: { name: '-' } }, 'secret'),
    ).toBe(SECRET);
    expect(secret?.metadata.ownerReferences).toEqual([
      { apiVersion: webhook.apiVersion, kind: 'Webhook', name: record.id, uid: webhook.metadata.uid },
    ]);

    for (const path of [`/v1/webhooks/${record.id}`, '/v1/webhooks']) {
      expect(await (await call(api, path, { key: alice })).text()).not.toContain(SECRET);
    }
  });

  it('without secret or description: hasSecret false, description null, no Secret', async () => {
    const { status, record } = await register(alice, {
      url: `${PUBLIC}/hooks/plain`,
      events: ['task.created'],
    });
    expect(status).toBe(201);
    expect(record).toMatchObject({ hasSecret: false, description: null, events: ['task.created'] });
    expect((await storedWebhook('acme', record.id)).spec.secretRef).toBeUndefined();
    expect(await api.store.get(SecretType, namespaceOf('acme'), `webhook-${record.id}`)).toBeUndefined();
  });

  it('answers 200 with the existing webhook, unchanged, for a URL registered already', async () => {
    const first = await register(alice, { url: `${PUBLIC}/hooks/again`, events: ['task.created'] });
    const again = await register(alice, {
      url: `${PUBLIC}/hooks/again`,
      events: ['task.failed'],
      secret: SECRET,
    });
    expect(again.status).toBe(200);
    expect(again.location).toBeNull();
    expect(again.record).toEqual(first.record);
    // The same target spelled differently (here with its default port) is the same URL.
    const respelled = await register(alice, {
      url: 'https://93.184.216.34:443/hooks/again',
      events: ['task.created'],
    });
    expect(respelled).toMatchObject({ status: 200, record: { id: first.record.id } });
    const same = (await webhooksOf(api.store, 'acme')).filter((w) => w.spec.url.endsWith('/hooks/again'));
    expect(same).toHaveLength(1);
    expect(
      await api.store.get(SecretType, namespaceOf('acme'), `webhook-${first.record.id}`),
    ).toBeUndefined();
  });

  it('answers 400 limit_exceeded for the 4th webhook of an organization with the default limit', async () => {
    const key = await api.key({ org: 'three' });
    for (let i = 0; i < 3; i++)
      await register(key, { url: `${PUBLIC}/limit/${i}`, events: ['task.created'] });
    const res = await call(api, '/v1/webhooks', {
      key,
      method: 'POST',
      body: { url: `${PUBLIC}/limit/3`, events: ['task.created'] },
    });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('limit_exceeded');
    expect(await webhooksOf(api.store, 'three')).toHaveLength(3);
    // At the limit, an already registered URL is still answered with its webhook.
    expect((await register(key, { url: `${PUBLIC}/limit/0`, events: ['task.created'] })).status).toBe(200);
    // Deleting one makes room.
    const [oldest] = (await webhooksOf(api.store, 'three')).map((w) => w.metadata.name);
    expect((await call(api, `/v1/webhooks/${oldest ?? ''}`, { key, method: 'DELETE' })).status).toBe(204);
    expect((await register(key, { url: `${PUBLIC}/limit/3`, events: ['task.created'] })).status).toBe(201);
  });

  it("follows the organization's own limit", async () => {
    const key = await api.key({ org: 'five' });
    await configureOrganization(api, 'five', (spec) => ({
      ...spec,
      limits: { ...spec.limits, webhooks: 5 },
    }));
    for (let i = 0; i < 5; i++) {
      expect((await register(key, { url: `${PUBLIC}/five/${i}`, events: ['task.created'] })).status).toBe(
        201,
      );
    }
    expect((await refusal(key, { url: `${PUBLIC}/five/5`, events: ['task.created'] })).code).toBe(
      'limit_exceeded',
    );
  });

  it.each([
    ['no events', { url: `${PUBLIC}/e`, events: [] }, 'events'],
    ['an unknown event type', { url: `${PUBLIC}/e`, events: ['task.created', 'task.exploded'] }, 'events.1'],
    ['events missing', { url: `${PUBLIC}/e` }, 'events'],
    ['url missing', { events: ['task.created'] }, 'url'],
    ['a url that is not a URL', { url: 'not a url', events: ['task.created'] }, 'url'],
    [
      'a description over 500 characters',
      { url: `${PUBLIC}/e`, events: ['task.created'], description: 'd'.repeat(501) },
      'description',
    ],
    [
      'a secret over 500 characters',
      { url: `${PUBLIC}/e`, events: ['task.created'], secret: 's'.repeat(501) },
      'secret',
    ],
    [
      'an unknown field beside a bad one',
      { url: 'not a url', events: ['task.created'], active: true },
      'url',
    ],
  ])('answers 400 validation_error for %s', async (_name, body, path) => {
    const error = await refusal(alice, body);
    expect(error.code).toBe('validation_error');
    expect(error.details?.[0]?.path).toBe(path);
    expect(JSON.stringify(error)).not.toContain('s'.repeat(501));
  });

  it('refuses other schemes and credentials in the URL, naming url', async () => {
    for (const url of ['ftp://93.184.216.34/x', 'https://user:pass@93.184.216.34/x']) {
      const error = await refusal(alice, { url, events: ['task.created'] });
      expect(error).toMatchObject({ code: 'validation_error', details: [{ path: 'url' }] });
      expect(JSON.stringify(error)).not.toContain('pass@');
    }
  });

  it('accepts http and private targets where the installation allows them (the test default)', async () => {
    const { status } = await register(alice, { url: 'http://127.0.0.1:9/hook', events: ['task.created'] });
    expect(status).toBe(201);
  });

  it('undoes the Webhook when its Secret cannot be written, answering 500 without the cause', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-webhooks-'));
    const inner = await EmbeddedStore.open(join(dir, 'store'));
    let failSecrets = false;
    const store = interceptingStore(inner, {
      beforeCreate: (kind) =>
        failSecrets && kind === 'Secret' ? Promise.reject(new Error('etcd is on fire')) : Promise.resolve(),
    });
    const failing = await startTestApi({ store });
    try {
      const key = await failing.key({ org: 'acme' });
      failSecrets = true;
      const res = await call(failing, '/v1/webhooks', {
        key,
        method: 'POST',
        body: { url: `${PUBLIC}/fails`, events: ['task.created'], secret: SECRET },
      });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(text).not.toContain('etcd');
      expect(text).not.toContain(SECRET);
      expect(await webhooksOf(inner, 'acme')).toHaveLength(0);
      const list = await call(failing, '/v1/webhooks', { key });
      expect(WebhookListSchema.parse(await list.json()).total).toBe(0);
    } finally {
      await failing.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
