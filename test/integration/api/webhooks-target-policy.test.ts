// The webhook API (docs/api.md#webhooks) on a test server with an embedded store.
// This file: which targets an installation that does not allow private targets accepts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { configureOrganization } from './tasks-support.js';
import { PUBLIC, refusal, register, useWebhooksApi, webhooksOf } from './webhooks-support.js';

useWebhooksApi();

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
