import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { PublicKeyDocumentSchema, WebhookRecordSchema } from '../../../api/webhook/present.js';
import type { WebhookRecord } from '../../../api/webhook/present.js';
import { SigningKeysCache } from '../../../api/webhook/signing-keys-cache.js';
import { SecretType, WebhookType, secretValue } from '../../../crds/index.js';
import type { Webhook } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { WebhookSigningKeys } from '../../../platform/webhook-signing.js';
import { CONTROL_NAMESPACE, call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import {
  ISO_MILLIS,
  configureOrganization,
  errorOf,
  interceptingStore,
  namespaceOf,
} from './tasks-support.js';

/** Public addresses (documentation or well-known), given as literals: registration needs no DNS. */
const PUBLIC = 'https://93.184.216.34';
const SECRET = 'whsec-do-not-echo-8c1f2e';

const WebhookListSchema = z.object({
  data: z.array(WebhookRecordSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});

let api: TestApi;
let alice: string;
let globex: string;

beforeAll(async () => {
  api = await startTestApi();
  alice = await api.key({ org: 'acme', user: 'alice' });
  globex = await api.key({ org: 'globex', user: 'gina' });
  await configureOrganization(api, 'acme', (spec) => ({
    ...spec,
    limits: { ...spec.limits, webhooks: 100 },
  }));
});
afterAll(async () => {
  await api.stop();
});

async function register(
  key: string,
  body: Record<string, unknown>,
  on: TestApi = api,
): Promise<{ status: number; record: WebhookRecord; text: string; location: string | null }> {
  const res = await call(on, '/v1/webhooks', { key, method: 'POST', body });
  const text = await res.text();
  if (res.status !== 200 && res.status !== 201) throw new Error(`POST answered ${res.status}: ${text}`);
  return {
    status: res.status,
    record: WebhookRecordSchema.parse(JSON.parse(text)),
    text,
    location: res.headers.get('location'),
  };
}

async function refusal(key: string, body: unknown, on: TestApi = api) {
  const res = await call(on, '/v1/webhooks', { key, method: 'POST', body });
  expect(res.status).toBe(400);
  return errorOf(res);
}

async function storedWebhook(org: string, id: string): Promise<Webhook> {
  const webhook = await api.store.get(WebhookType, namespaceOf(org), id);
  if (webhook === undefined) throw new Error(`webhook ${id} is not stored`);
  return webhook;
}

const webhooksOf = async (store: TestApi['store'], org: string): Promise<Webhook[]> =>
  (await store.list(WebhookType, { namespace: namespaceOf(org) })).items;

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

describe('target policy when the installation does not allow private targets', () => {
  let strict: TestApi;
  let key: string;
  let openKey: string;

  beforeAll(async () => {
    strict = await startTestApi({ allowPrivateWebhookTargets: false });
    key = await strict.key({ org: 'acme' });
    openKey = await strict.key({ org: 'lab' });
    await configureOrganization(strict, 'lab', (spec) => ({ ...spec, allowPrivateWebhookTargets: true }));
  });
  afterAll(async () => {
    await strict.stop();
  });

  it('refuses plain http, naming url', async () => {
    const error = await refusal(key, { url: 'http://93.184.216.34/hook', events: ['task.created'] }, strict);
    expect(error).toMatchObject({ code: 'validation_error', details: [{ path: 'url' }] });
    expect(error.details?.[0]?.message).toMatch(/https/);
  });

  it.each([
    ['loopback', 'https://127.0.0.1/hook'],
    ['a loopback name', 'https://localhost:8443/hook'],
    ['private 10/8', 'https://10.1.2.3/hook'],
    ['private 192.168/16', 'https://192.168.0.10/hook'],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['IPv6 loopback', 'https://[::1]/hook'],
  ])('refuses %s with a readable message naming url', async (_name, url) => {
    const error = await refusal(key, { url, events: ['task.created'] }, strict);
    expect(error.code).toBe('validation_error');
    expect(error.details).toHaveLength(1);
    expect(error.details?.[0]?.path).toBe('url');
    expect(error.details?.[0]?.message).toMatch(/webhook target .* is .*address|loopback name/);
    expect(await webhooksOf(strict.store, 'acme')).toHaveLength(0);
  });

  it('accepts a public https target', async () => {
    expect((await register(key, { url: `${PUBLIC}/ok`, events: ['task.created'] }, strict)).status).toBe(201);
  });

  it('allows private targets and http for an organization that allows them for itself', async () => {
    for (const url of ['https://127.0.0.1/hook', 'http://10.1.2.3:8080/hook', 'https://169.254.169.254/x']) {
      expect((await register(openKey, { url, events: ['task.created'] }, strict)).status).toBe(201);
    }
  });
});

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

describe('GET /v1/webhooks/public_key', () => {
  it('publishes the key that verifies what WebhookSigningKeys signs on the same store', async () => {
    const res = await call(api, '/v1/webhooks/public_key', { key: alice });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['algorithm', 'keyId', 'previous', 'publicKey', 'publicKeyPem']);
    const document = PublicKeyDocumentSchema.parse(body);
    expect(document).toMatchObject({ algorithm: 'ed25519', previous: [] });
    expect(document.publicKey).toMatch(/^whpk_[A-Za-z0-9+/]+={0,2}$/);

    const keys = await WebhookSigningKeys.load(api.store, CONTROL_NAMESPACE);
    const payload = JSON.stringify({ id: 'evt_1', type: 'task.completed' });
    const [signature = ''] = keys.sign('msg_1', 1_700_000_000, payload).split(' ');
    expect(signature.startsWith('v1a,')).toBe(true);
    const valid = verify(
      null,
      Buffer.from(`msg_1.1700000000.${payload}`),
      createPublicKey(document.publicKeyPem),
      Buffer.from(signature.slice('v1a,'.length), 'base64'),
    );
    expect(valid).toBe(true);
    // The raw form is the same key.
    const raw = Buffer.from(document.publicKey.slice('whpk_'.length), 'base64').toString('base64url');
    expect(
      createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' }).equals(
        createPublicKey(document.publicKeyPem),
      ),
    ).toBe(true);
  });

  it('serves a rotation once the cached keys are older than the reload interval', async () => {
    let now = new Date();
    const cache = new SigningKeysCache(api.store, CONTROL_NAMESPACE, { ttlMs: 30_000, now: () => now });
    const before = (await cache.get()).publicKeyDocument();
    await WebhookSigningKeys.rotate(api.store, CONTROL_NAMESPACE, { windowMs: 3_600_000 });
    expect((await cache.get()).publicKeyDocument().keyId).toBe(before.keyId);
    now = new Date(now.getTime() + 30_001);
    const after = (await cache.get()).publicKeyDocument();
    expect(after.keyId).not.toBe(before.keyId);
    expect(after.previous.map((key) => key.keyId)).toEqual([before.keyId]);
  });
});
