import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { apiKeyId, issueApiKey, revokeApiKey } from '../../../api/auth/api-keys.js';
import { CONTROL_NAMESPACE, call, eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { createTask, errorOf, getTask } from './tasks-support.js';

// The web pages' session (docs/api.md#web-pages): sign-in by API key into an HttpOnly cookie, the
// cookie standing for the key on /v1, and the CSRF proof its mutations need.

const OWN_ORIGIN = 'http://agentry.test';
const HOUR_MS = 3_600_000;
const SessionSchema = z.object({
  organization: z.string(),
  scopes: z.array(z.string()),
  expiresAt: z.iso.datetime(),
});

let api: TestApi;
let alice: string;
let clock = Date.now();

beforeAll(async () => {
  api = await startTestApi({ now: () => new Date(clock) });
  alice = await api.key({ org: 'acme', user: 'alice', scopes: ['*'] });
});
afterAll(async () => {
  await api.stop();
});

/** POST /ui/session as the sign-in page sends it. */
const signInRequest = (apiKey: string, headers: Record<string, string> = {}): Promise<Response> =>
  call(api, '/ui/session', { method: 'POST', body: { apiKey }, headers: { origin: OWN_ORIGIN, ...headers } });

/** Signs in and returns the `Cookie` header a browser would send back. */
async function signIn(apiKey: string): Promise<string> {
  const res = await signInRequest(apiKey);
  expect(res.status).toBe(200);
  const [cookie] = res.headers.getSetCookie();
  if (cookie === undefined) throw new Error('no session cookie');
  return cookie.split(';')[0] ?? '';
}

/** A request carrying only the session cookie, as the pages' fetches do (no key header). */
const withCookie = (
  cookie: string,
  path: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> => call(api, path, { ...init, headers: { cookie, ...init.headers } });

/** The CSRF proof the pages send with every mutation. */
const PAGE_MUTATION = { 'x-agentry-csrf': '1', origin: OWN_ORIGIN, 'sec-fetch-site': 'same-origin' };

describe('signing in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and tells whose session it is', async () => {
    const res = await signInRequest(alice);
    expect(res.status).toBe(200);
    const body = SessionSchema.parse(await res.json());
    expect(body).toMatchObject({ organization: 'acme', scopes: ['*'] });
    expect(Date.parse(body.expiresAt) - clock).toBeGreaterThan(11 * HOUR_MS);
    const cookies = res.headers.getSetCookie();
    expect(cookies).toHaveLength(1);
    const attributes = (cookies[0] ?? '').split('; ');
    expect(attributes[0]).toMatch(/^agentry_session=v2\.[0-9a-f]{16}\.\d+\.\d+\.[A-Za-z0-9_-]+$/);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Path=/']));
    expect(attributes.find((attribute) => attribute.startsWith('Max-Age='))).toMatch(/^Max-Age=4319\d$/);
    // http public URL: no Secure (a browser would drop the cookie), and the key itself is nowhere in it.
    expect(attributes).not.toContain('Secure');
    expect(cookies[0]).not.toContain(alice);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 401 and sets no cookie for a wrong key', async () => {
    const res = await signInRequest('agk_not-a-real-key-at-all-0000000000000000');
    expect(res.status).toBe(401);
    expect((await errorOf(res)).code).toBe('invalid_api_key');
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('answers 401 and sets no cookie for an expired key', async () => {
    const expired = await api.key({ user: 'old', expiresAt: new Date(clock - 1000).toISOString() });
    const res = await signInRequest(expired);
    expect(res.status).toBe(401);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('refuses a sign-in posted from another origin (login CSRF) with 403 and no cookie', async () => {
    const res = await signInRequest(alice, { origin: 'http://evil.test' });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('answers 415 to a sign-in that is not JSON (an HTML form cannot sign in)', async () => {
    const res = await call(api, '/ui/session', {
      method: 'POST',
      body: `apiKey=${alice}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it('answers 400 validation_error to a sign-in without a key', async () => {
    const res = await call(api, '/ui/session', { method: 'POST', body: {} });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).code).toBe('validation_error');
  });

  it('marks the cookie Secure when the public URL is https', async () => {
    const secure = await startTestApi({ publicUrl: 'https://agentry.test' });
    try {
      const key = await secure.key();
      const res = await call(secure, '/ui/session', { method: 'POST', body: { apiKey: key } });
      expect(res.status).toBe(200);
      expect((res.headers.getSetCookie()[0] ?? '').split('; ')).toContain('Secure');
    } finally {
      await secure.stop();
    }
  });
});

describe('the session', () => {
  it('GET /ui/session answers the session with the cookie and 401 without', async () => {
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, '/ui/session');
    expect(res.status).toBe(200);
    expect(SessionSchema.parse(await res.json()).organization).toBe('acme');
    expect((await call(api, '/ui/session')).status).toBe(401);
  });

  it('reads a task through the cookie alone', async () => {
    const created = await createTask(api, alice, { prompt: 'read me' });
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, `/v1/tasks/${created.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: created.id, title: 'read me' });
  });

  it('answers 401 to a forged cookie', async () => {
    const cookie = await signIn(alice);
    // v2.<key id>.<issued ms>.<expiry s>.<mac>: a later expiry under the same MAC.
    const forged = cookie.replace(
      /^(agentry_session=v2\.[0-9a-f]+\.\d+\.)(\d+)\./,
      (_m, head: string, seconds: string) => `${head}${Number(seconds) + 3600}.`,
    );
    expect(forged).not.toBe(cookie);
    expect((await withCookie(forged, '/v1/tasks')).status).toBe(401);
    expect((await withCookie(forged, '/ui/session')).status).toBe(401);
  });

  it('ends when its key is revoked, at once', async () => {
    const key = await api.key({ user: 'revoked' });
    const cookie = await signIn(key);
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(200);
    await revokeApiKey(api.store, CONTROL_NAMESPACE, apiKeyId(key));
    await eventually(async () => (await withCookie(cookie, '/v1/tasks')).status === 401);
    expect((await withCookie(cookie, '/ui/session')).status).toBe(401);
  });

  it('stays ended when the revoked key is issued again with the same text', async () => {
    const text = 'agk_reissued-key-for-the-session-test-0000';
    const issue = async (): Promise<void> => {
      await issueApiKey(api.store, CONTROL_NAMESPACE, {
        organization: 'acme',
        user: 'again',
        scopes: ['*'],
        key: text,
      });
      await eventually(async () => (await call(api, '/v1/tasks', { key: text })).status === 200);
    };
    await issue();
    const cookie = await signIn(text);
    await revokeApiKey(api.store, CONTROL_NAMESPACE, apiKeyId(text));
    await eventually(async () => (await call(api, '/v1/tasks', { key: text })).status === 401);
    await issue();
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(401);
    expect((await withCookie(await signIn(text), '/v1/tasks')).status).toBe(200);
  });

  it('ends with its key expiring before the session would', async () => {
    const key = await api.key({ user: 'brief', expiresAt: new Date(clock + HOUR_MS).toISOString() });
    const res = await signInRequest(key);
    const body = SessionSchema.parse(await res.json());
    expect(Date.parse(body.expiresAt)).toBeLessThanOrEqual(clock + HOUR_MS);
    const cookie = (res.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(200);
    const started = clock;
    clock += HOUR_MS + 1000;
    try {
      expect((await withCookie(cookie, '/v1/tasks')).status).toBe(401);
    } finally {
      clock = started;
    }
  });

  it('ends after its TTL (12 h)', async () => {
    const cookie = await signIn(alice);
    const started = clock;
    clock += 12 * HOUR_MS + 1000;
    try {
      expect((await withCookie(cookie, '/v1/tasks')).status).toBe(401);
      expect((await withCookie(cookie, '/ui/session')).status).toBe(401);
    } finally {
      clock = started;
    }
  });

  it("answers 404 for another organization's task through a cookie too", async () => {
    const other = await api.key({ org: 'globex', user: 'gina' });
    const theirs = await createTask(api, other, { prompt: 'globex only' });
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, `/v1/tasks/${theirs.id}`);
    expect(res.status).toBe(404);
  });

  it('lets a key header win over the cookie', async () => {
    const other = await api.key({ org: 'globex', user: 'gina' });
    const theirs = await createTask(api, other, { prompt: 'globex task' });
    const cookie = await signIn(alice);
    expect((await withCookie(cookie, `/v1/tasks/${theirs.id}`, { headers: { API_KEY: other } })).status).toBe(
      200,
    );
    const wrongKey = await withCookie(cookie, '/v1/tasks', {
      headers: { API_KEY: 'agk_wrong-key-000000000000' },
    });
    expect(wrongKey.status).toBe(401);
  });
});

describe('CSRF on cookie-authenticated mutations', () => {
  it('refuses a mutation without the CSRF header with 403 and changes nothing', async () => {
    const created = await createTask(api, alice, { prompt: 'keep me' });
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, `/v1/tasks/${created.id}/visibility`, {
      method: 'PATCH',
      body: { visibility: 'public' },
    });
    expect(res.status).toBe(403);
    expect((await errorOf(res)).code).toBe('forbidden');
    const deleted = await withCookie(cookie, `/v1/tasks/${created.id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(403);
    const task = await getTask(api, alice, created.id);
    expect(task.visibility).not.toBe('public');
  });

  it('refuses a mutation from another origin or site even with the header', async () => {
    const created = await createTask(api, alice, { prompt: 'not yours' });
    const cookie = await signIn(alice);
    for (const foreign of [{ origin: 'http://evil.test' }, { 'sec-fetch-site': 'cross-site' }]) {
      const res = await withCookie(cookie, `/v1/tasks/${created.id}`, {
        method: 'DELETE',
        headers: { ...PAGE_MUTATION, ...foreign },
      });
      expect(res.status).toBe(403);
    }
    expect((await getTask(api, alice, created.id)).id).toBe(created.id);
  });

  it('accepts a mutation from the pages (header, own origin, same-origin)', async () => {
    const created = await createTask(api, alice, { prompt: 'share me' });
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, `/v1/tasks/${created.id}/visibility`, {
      method: 'PATCH',
      body: { visibility: 'public' },
      headers: PAGE_MUTATION,
    });
    expect(res.status).toBe(200);
    expect((await getTask(api, alice, created.id)).visibility).toBe('public');
  });

  it('answers 403 in the context-lake shape under /v1/context-lake', async () => {
    const cookie = await signIn(alice);
    const res = await withCookie(cookie, '/v1/context-lake/sql', {
      method: 'POST',
      body: { sql: 'select 1' },
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'forbidden' });
  });

  it('needs no CSRF header for a mutation authenticated by a key header', async () => {
    const created = await createTask(api, alice, { prompt: 'api client' });
    const res = await call(api, `/v1/tasks/${created.id}/cancel`, { key: alice, method: 'POST' });
    expect(res.status).not.toBe(403);
  });
});

describe('signing out', () => {
  it('expires the cookie, and needs the CSRF header', async () => {
    const cookie = await signIn(await api.key({ user: 'leaving' }));
    const refused = await withCookie(cookie, '/ui/session', { method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect(refused.headers.getSetCookie()).toEqual([]);
    const res = await withCookie(cookie, '/ui/session', { method: 'DELETE', headers: PAGE_MUTATION });
    expect(res.status).toBe(204);
    const [expired] = res.headers.getSetCookie();
    expect((expired ?? '').split('; ')).toEqual(
      expect.arrayContaining(['agentry_session=', 'Max-Age=0', 'HttpOnly', 'SameSite=Strict', 'Path=/']),
    );
  });

  it('ends a copy of the cookie kept elsewhere, and every other session of the key', async () => {
    const key = await api.key({ user: 'copied' });
    const cookie = await signIn(key);
    const otherBrowser = await signIn(key);
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(200);
    const res = await withCookie(cookie, '/ui/session', { method: 'DELETE', headers: PAGE_MUTATION });
    expect(res.status).toBe(204);
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(401);
    expect((await withCookie(cookie, '/ui/session')).status).toBe(401);
    expect((await withCookie(otherBrowser, '/v1/tasks')).status).toBe(401);
    expect((await call(api, '/v1/tasks', { key })).status).toBe(200);
  });

  it('lets the key sign in again afterwards', async () => {
    const key = await api.key({ user: 'returning' });
    const cookie = await signIn(key);
    await withCookie(cookie, '/ui/session', { method: 'DELETE', headers: PAGE_MUTATION });
    const started = clock;
    clock += 1;
    try {
      expect((await withCookie(await signIn(key), '/v1/tasks')).status).toBe(200);
    } finally {
      clock = started;
    }
  });

  it('changes nothing for a cookie that is no session (forged or expired)', async () => {
    const key = await api.key({ user: 'bystander' });
    const cookie = await signIn(key);
    const forged = `agentry_session=v2.${'0'.repeat(16)}.1.9999999999.AAAA`;
    const res = await withCookie(forged, '/ui/session', { method: 'DELETE', headers: PAGE_MUTATION });
    expect(res.status).toBe(204);
    expect((await withCookie(cookie, '/v1/tasks')).status).toBe(200);
  });
});
