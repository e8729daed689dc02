import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { apiKeyId, revokeApiKey } from '../../../api/auth/api-keys.js';
import { SecretType } from '../../../crds/index.js';
import { CONTROL_NAMESPACE, call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key();
});
afterAll(async () => {
  await api.stop();
});

describe('authentication (docs/api.md#authentication)', () => {
  it('answers 401 missing_api_key without a key header', async () => {
    const res = await call(api, '/v1/agent-computers');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: { code: 'missing_api_key', message: expect.any(String) } });
  });

  it('answers 401 invalid_api_key for an unknown key', async () => {
    const res = await call(api, '/v1/agent-computers', { key: 'agk_not-a-real-key-at-all-0000000000000000' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');
  });

  it.each(['API_KEY', 'api-key', 'x-api-key', 'X-API-KEY', 'Api-Key'])(
    'accepts the key in header %s',
    async (header) => {
      const res = await call(api, '/v1/agent-computers', { headers: { [header]: key } });
      expect(res.status).toBe(200);
    },
  );

  it('answers 401 invalid_api_key for an expired key', async () => {
    const expired = await api.key({ user: 'bob', expiresAt: new Date(Date.now() - 1000).toISOString() });
    const res = await call(api, '/v1/agent-computers', { key: expired });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      error: { code: 'invalid_api_key', message: 'The API key has expired' },
    });
  });

  it('accepts a key until its expiry', async () => {
    const fresh = await api.key({ user: 'carol', expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await call(api, '/v1/agent-computers', { key: fresh })).status).toBe(200);
  });

  it('answers 401 invalid_api_key once a key is revoked', async () => {
    const doomed = await api.key({ user: 'dave' });
    expect((await call(api, '/v1/agent-computers', { key: doomed })).status).toBe(200);
    await expect(revokeApiKey(api.store, CONTROL_NAMESPACE, apiKeyId(doomed))).resolves.toBe(true);
    await eventually(async () => (await call(api, '/v1/agent-computers', { key: doomed })).status === 401);
  });

  it('answers 403 insufficient_scopes when the key lacks the route scope', async () => {
    const readOnly = await api.key({ user: 'erin', scopes: ['tasks:read'] });
    const res = await call(api, '/v1/agent-computers', { key: readOnly });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('insufficient_scopes');
  });

  it('grants a read scope no write: POST needs agent-computers:write', async () => {
    const reader = await api.key({ user: 'frank', scopes: ['agent-computers:read'] });
    expect((await call(api, '/v1/agent-computers', { key: reader })).status).toBe(200);
    const res = await call(api, '/v1/agent-computers', { key: reader, method: 'POST', body: {} });
    expect(res.status).toBe(403);
  });

  it('never stores the key itself, only its hash', async () => {
    const { items } = await api.store.list(SecretType, { namespace: CONTROL_NAMESPACE });
    const stored = JSON.stringify(items);
    expect(stored).not.toContain(key);
    expect(stored).not.toContain(Buffer.from(key).toString('base64'));
  });
});
