// What the webhook API tests share: one API with keys of two organizations, and helpers to
// register webhooks, read refusals and read what the API stored.
import { afterAll, beforeAll, expect } from '@jest/globals';
import { z } from 'zod';
import { WebhookRecordSchema } from '../../../api/webhook/present.js';
import type { WebhookRecord } from '../../../api/webhook/present.js';
import { WebhookType } from '../../../crds/index.js';
import type { Webhook } from '../../../crds/index.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { configureOrganization, errorOf, namespaceOf } from './tasks-support.js';

/** Public addresses (documentation or well-known), given as literals: registration needs no DNS. */
export const PUBLIC = 'https://93.184.216.34';
export const SECRET = 'whsec-do-not-echo-8c1f2e';

export const WebhookListSchema = z.object({
  data: z.array(WebhookRecordSchema),
  total: z.number(),
  limit: z.number(),
  offset: z.number(),
});

/** The API most tests share and its keys: live bindings, set by useWebhooksApi's beforeAll. */
export let api: TestApi;
export let alice: string;
export let globex: string;

/** Starts the shared API with keys of acme and globex, acme allowed many webhooks. */
export function useWebhooksApi(): void {
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
}

export async function register(
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

export async function refusal(key: string, body: unknown, on: TestApi = api) {
  const res = await call(on, '/v1/webhooks', { key, method: 'POST', body });
  expect(res.status).toBe(400);
  return errorOf(res);
}

export async function storedWebhook(org: string, id: string): Promise<Webhook> {
  const webhook = await api.store.get(WebhookType, namespaceOf(org), id);
  if (webhook === undefined) throw new Error(`webhook ${id} is not stored`);
  return webhook;
}

export const webhooksOf = async (store: TestApi['store'], org: string): Promise<Webhook[]> =>
  (await store.list(WebhookType, { namespace: namespaceOf(org) })).items;
