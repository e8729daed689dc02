// A workspace's prompt token on the API (docs/api.md#prompt-tokens): it reads its organization's
// context lake (datasets, views, status) while its prompt runs, and nothing else: every other
// route refuses it in that route's error shape, and an ended prompt's token is a 401.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { call } from '../../support/api-server.js';
import { runningPrompt, startGateway } from '../model-gateway/gateway-support.js';
import type { GatewayFixture } from '../model-gateway/gateway-support.js';
import { lake, lakeError } from './context-lake-support.js';

let fixture: GatewayFixture;
let token = '';

beforeAll(async () => {
  fixture = await startGateway();
  ({ token } = await runningPrompt(fixture, { executor: 'shell' }));
});
afterAll(async () => {
  await fixture.stop();
});

const bearer = (path: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${fixture.api.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });

const TaskErrorSchema = z.strictObject({ error: z.strictObject({ code: z.string(), message: z.string() }) });

describe("a live prompt's token", () => {
  it("reads the organization's datasets, views and status as a bearer token", async () => {
    const answers = await Promise.all(
      ['/datasets', '/views', '/status'].map(async (path) => {
        const res = await bearer(`/v1/context-lake${path}`);
        return { path, status: res.status };
      }),
    );
    expect(answers).toEqual([
      { path: '/datasets', status: 200 },
      { path: '/views', status: 200 },
      { path: '/status', status: 200 },
    ]);
  });

  it("reads its own organization's lake, never another's", async () => {
    const betaKey = await fixture.api.key({ org: 'beta', user: 'bo' });
    const added = await lake(fixture.api, betaKey, 'POST', '/datasets', {
      name: 'beta_only',
      from: 'https://example.com/beta.csv',
    });
    expect(added.status).toBe(201);
    const read = await (await bearer('/v1/context-lake/datasets')).json();
    expect(read).toEqual({ datasets: [] });
  });

  it('is accepted in an API key header too, as a client of the hosted service sends its credential', async () => {
    const read = await lake(fixture.api, token, 'GET', '/datasets');
    expect({ status: read.status, json: read.json }).toEqual({ status: 200, json: { datasets: [] } });
  });

  it("is refused on the lake's writes and other reads with 403 in the lake's shape, and changes nothing", async () => {
    const dataset = { name: 'x', from: 'https://example.com/x.csv' };
    await lakeError(lake(fixture.api, token, 'POST', '/datasets', dataset), 403, 'insufficient_scopes');
    await lakeError(
      lake(fixture.api, token, 'PATCH', '/config', { addViews: [] }),
      403,
      'insufficient_scopes',
    );
    await lakeError(lake(fixture.api, token, 'GET', '/config'), 403, 'insufficient_scopes');
    await lakeError(lake(fixture.api, token, 'POST', '/start'), 403, 'insufficient_scopes');
    const after = await lake(fixture.api, token, 'GET', '/datasets');
    expect(after.json).toEqual({ datasets: [] });
  });

  it("is refused on every other API with 403 in the task API's shape", async () => {
    const refused = await Promise.all(
      [
        { path: '/v1/tasks' },
        { path: '/v1/tasks', method: 'POST', body: { executor: 'shell', prompt: 'echo escaped' } },
        { path: '/v1/agent-computers' },
        { path: '/v1/webhooks' },
        { path: '/v1/admin/organizations' },
      ].map(async (route) => {
        const res = await bearer(route.path, route);
        return { status: res.status, code: TaskErrorSchema.parse(await res.json()).error.code };
      }),
    );
    expect(refused).toEqual(Array(5).fill({ status: 403, code: 'insufficient_scopes' }));
  });
});

describe('a token that stands for no live prompt', () => {
  it('is refused with 401 once its prompt has ended, or is being canceled', async () => {
    for (const options of [{ status: 'succeeded' as const }, { cancelRequested: true }]) {
      const ended = await runningPrompt(fixture, { executor: 'shell', ...options });
      await lakeError(lake(fixture.api, ended.token, 'GET', '/datasets'), 401, 'invalid_api_key');
    }
  });

  it('is refused with 401 when forged or altered', async () => {
    const altered = `${token.slice(0, -2)}xx`;
    await lakeError(lake(fixture.api, altered, 'GET', '/status'), 401, 'invalid_api_key');
    const res = await call(fixture.api, '/v1/tasks', { headers: { authorization: `Bearer ${altered}` } });
    expect(res.status).toBe(401);
  });

  it('stands for no organization when its namespace has none', async () => {
    const orphan = fixture.tokens.issue({
      namespace: 'agentry-org-nobody',
      task: 't',
      prompt: 'p',
      executor: 'shell',
      workspace: 'w',
      exp: Math.ceil(Date.now() / 1000) + 600,
    });
    await lakeError(lake(fixture.api, orphan, 'GET', '/datasets'), 401, 'invalid_api_key');
  });
});
