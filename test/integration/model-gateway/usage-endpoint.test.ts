import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ModelUsageSchema, ModelUsageTotalsSchema, TaskType } from '../../../crds/index.js';
import { EmbeddedStore } from '../../../platform/store/embedded.js';
import { startModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import type { ModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import { NAMESPACE, gatewayCall, runningPrompt, startGateway } from './gateway-support.js';
import type { GatewayFixture } from './gateway-support.js';

const UsageAnswerSchema = z.object({
  prompt: ModelUsageSchema.nullable(),
  task: ModelUsageTotalsSchema.nullable(),
});

let standIn: ModelProviderStandIn;
let fixture: GatewayFixture;

beforeAll(async () => {
  standIn = await startModelProviderStandIn();
  fixture = await startGateway({ standIn });
});
afterAll(async () => {
  await fixture.stop();
  await standIn.close();
});

const usageOf = (url: string, token: string) =>
  fetch(`${url}/model-gateway/usage`, { headers: { authorization: `Bearer ${token}` } });

async function oneCall(api: { url: string }, token: string): Promise<void> {
  const res = await gatewayCall(api, '/anthropic/v1/messages', {
    headers: { 'x-api-key': token },
    body: { model: 'claude-sonnet-4-5', stream: true, messages: [] },
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
}

describe('GET /model-gateway/usage', () => {
  it('answers the prompt usage and the task totals to the prompt token', async () => {
    const running = await runningPrompt(fixture);
    await oneCall(fixture.api, running.token);
    const res = await usageOf(fixture.api.url, running.token);
    expect(res.status).toBe(200);
    const answer = UsageAnswerSchema.parse(await res.json());
    expect(answer.prompt).toEqual({ requests: 1, inputTokens: 100, outputTokens: 50, costUsd: 0.00105 });
    expect(answer.task).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
  });

  it('still answers once the prompt has ended', async () => {
    const ended = await runningPrompt(fixture, { status: 'succeeded' });
    const res = await usageOf(fixture.api.url, ended.token);
    expect(res.status).toBe(200);
    expect(UsageAnswerSchema.parse(await res.json())).toEqual({ prompt: null, task: null });
  });

  it('refuses a forged token with 401', async () => {
    const running = await runningPrompt(fixture);
    const res = await usageOf(fixture.api.url, `${running.token}x`);
    expect(res.status).toBe(401);
  });
});

describe('model gateway metrics', () => {
  it('counts calls by outcome and tokens by organization, model and kind', async () => {
    const running = await runningPrompt(fixture);
    await oneCall(fixture.api, running.token);
    await (
      await gatewayCall(fixture.api, '/anthropic/v1/messages', { headers: { 'x-api-key': 'bad' } })
    ).text();
    const text = await (await fetch(`${fixture.api.url}/metrics`)).text();
    expect(text).toMatch(/agentry_model_requests_total\{provider="anthropic",outcome="forwarded"\} [1-9]/);
    expect(text).toMatch(/agentry_model_requests_total\{provider="anthropic",outcome="unauthorized"\} [1-9]/);
    expect(text).toMatch(
      /agentry_model_tokens_total\{org="acme",provider="anthropic",model="claude-sonnet-4-5-20250929",kind="input"\} [1-9]/,
    );
    expect(text).toMatch(
      /agentry_model_cost_usd_total\{org="acme",provider="anthropic",model="claude-sonnet-4-5-20250929"\}/,
    );
    expect(text).toContain('agentry_model_request_duration_seconds_bucket');
    // The request metric's route label is the gateway's template, never a provider path.
    expect(text).toContain('route="/model-gateway/*path"');
    expect(text).not.toContain('route="unmatched"');
  });
});

describe('model gateway restart', () => {
  it('keeps the usage written before a stream ended across an API restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agentry-gateway-restart-'));
    try {
      const first = await startGateway({ store: await EmbeddedStore.open(join(dir, 'store')), standIn });
      const running = await runningPrompt(first);
      await oneCall(first.api, running.token);
      await first.stop();

      const second = await startGateway({ store: await EmbeddedStore.open(join(dir, 'store')), standIn });
      try {
        const task = await second.api.store.get(TaskType, NAMESPACE, running.task.metadata.name);
        expect(task?.status?.prompts?.[0]?.usage).toMatchObject({ requests: 1, inputTokens: 100 });
        // The installation key is stored too: the prompt's token still works after the restart.
        const res = await usageOf(second.api.url, running.token);
        expect(UsageAnswerSchema.parse(await res.json()).task).toMatchObject({ requests: 1 });
      } finally {
        await second.stop();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
