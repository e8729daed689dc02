import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ModelUsage } from '../../../crds/index.js';
import type { StandInBehaviour } from '../../support/model-provider-stand-in.js';
import {
  NAMESPACE,
  REAL_KEYS,
  gatewayCall,
  runningPrompt,
  startGateway,
  storedOrganization,
  storedTask,
} from './gateway-support.js';
import type { GatewayFixture, RunningPrompt } from './gateway-support.js';

let fixture: GatewayFixture;
const defaults: StandInBehaviour = {
  model: 'claude-sonnet-4-5-20250929',
  usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0 },
};

beforeAll(async () => {
  fixture = await startGateway();
});
afterAll(async () => {
  await fixture.stop();
});
beforeEach(() => {
  fixture.standIn.received.length = 0;
  fixture.standIn.behaviour = { ...defaults };
});

/** What the stand-in received for the one call a test made. */
function onlyReceived() {
  expect(fixture.standIn.received).toHaveLength(1);
  const [received] = fixture.standIn.received;
  if (received === undefined) throw new Error('nothing received');
  return received;
}

/**
 * One call through the gateway, read to its end: the bytes the client got must be the bytes the
 * stand-in sent. Returns them, the response and what the stand-in received.
 */
async function relayed(path: string, init: { headers?: Record<string, string>; body: unknown }) {
  const res = await gatewayCall(fixture.api, path, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  const received = onlyReceived();
  expect(bytes.equals(received.sent)).toBe(true);
  return { res, bytes, received };
}

/** The prompt's usage as stored now. */
async function promptUsage(running: RunningPrompt): Promise<ModelUsage | undefined> {
  const task = await storedTask(fixture.api, running.task.metadata.name);
  return task.status?.prompts?.find((entry) => entry.id === running.prompt)?.usage;
}

/** The headers never carry the token anywhere, only the real key in the canonical header. */
function expectOnlyRealKey(headers: Record<string, unknown>, token: string) {
  expect(JSON.stringify(headers)).not.toContain(token);
}

describe('model gateway round trips', () => {
  it('forwards an Anthropic JSON call with the real key in x-api-key, and records its usage and cost', async () => {
    const running = await runningPrompt(fixture);
    const { res, received } = await relayed('/anthropic/v1/messages', {
      headers: { 'x-api-key': running.token, 'anthropic-version': '2023-06-01' },
      body: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(res.status).toBe(200);
    expect(received.url).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe(REAL_KEYS.anthropic);
    expect(received.headers['anthropic-version']).toBe('2023-06-01');
    expectOnlyRealKey(received.headers, running.token);
    // 100 input × $3 + 50 output × $15 per million (claude-sonnet-4).
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 100,
      outputTokens: 50,
      costUsd: 0.00105,
    });
  });

  it('relays an Anthropic stream byte for byte with a bearer token, counting cache reads and writes as input', async () => {
    fixture.standIn.behaviour.usage = { input: 100, output: 50, cacheRead: 1000, cacheWrite: 200 };
    const running = await runningPrompt(fixture);
    // Without /v1 in the client's base URL: the gateway adds it.
    const res = await gatewayCall(fixture.api, '/anthropic/messages', {
      headers: { authorization: `Bearer ${running.token}` },
      body: { model: 'claude-sonnet-4-5', max_tokens: 10, stream: true, messages: [] },
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const bytes = Buffer.from(await res.arrayBuffer());
    const received = onlyReceived();
    expect(received.url).toBe('/v1/messages');
    expect(received.headers['x-api-key']).toBe(REAL_KEYS.anthropic);
    expect(received.headers.authorization).toBeUndefined();
    expect(bytes.toString()).toContain('event: message_stop');
    // 100×3 + 1000×0.3 + 200×3.75 + 50×15 = 2,100 micro-dollars.
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 1300,
      outputTokens: 50,
      cacheReadTokens: 1000,
      cacheWriteTokens: 200,
      costUsd: 0.0021,
    });
  });

  it('forwards an OpenAI chat completion with the real key as the bearer token', async () => {
    fixture.standIn.behaviour = {
      model: 'gpt-5-mini-2025-08-07',
      usage: { input: 100, output: 50, cacheRead: 20, cacheWrite: 0 },
    };
    const running = await runningPrompt(fixture, { executor: 'codex' });
    const { received } = await relayed('/openai/v1/chat/completions', {
      headers: { authorization: `Bearer ${running.token}` },
      body: { model: 'gpt-5-mini', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(received.headers.authorization).toBe(`Bearer ${REAL_KEYS.openai}`);
    // 100 fresh × $0.25 + 20 cached × $0.025 + 50 × $2 per million (gpt-5-mini).
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 120,
      outputTokens: 50,
      cacheReadTokens: 20,
      costUsd: 0.0001255,
    });
  });

  it('reads the usage chunk of an OpenAI chat stream with include_usage, relaying [DONE] last', async () => {
    fixture.standIn.behaviour.model = 'gpt-5-2025-08-07';
    const running = await runningPrompt(fixture, { executor: 'codex' });
    const { bytes } = await relayed('/openai/v1/chat/completions', {
      headers: { authorization: `Bearer ${running.token}` },
      body: { model: 'gpt-5', stream: true, stream_options: { include_usage: true }, messages: [] },
    });
    expect(bytes.toString().endsWith('data: [DONE]\n\n')).toBe(true);
    expect(await promptUsage(running)).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
  });

  it('reads the usage of an OpenAI Responses stream from response.completed', async () => {
    fixture.standIn.behaviour.model = 'gpt-5-codex';
    const running = await runningPrompt(fixture, { executor: 'codex' });
    await relayed('/openai/v1/responses', {
      headers: { authorization: `Bearer ${running.token}` },
      body: { model: 'gpt-5-codex', stream: true, input: 'hi' },
    });
    // gpt-5 prices: 100 × $1.25 + 50 × $10 per million.
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 100,
      outputTokens: 50,
      costUsd: 0.000625,
    });
  });

  it('forwards a Gemini generateContent call with the real key in x-goog-api-key', async () => {
    fixture.standIn.behaviour.model = 'gemini-2.5-flash';
    const running = await runningPrompt(fixture, { executor: 'gemini' });
    const { received } = await relayed('/gemini/v1beta/models/gemini-2.5-flash:generateContent', {
      headers: { 'x-goog-api-key': running.token },
      body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
    });
    expect(received.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(received.headers['x-goog-api-key']).toBe(REAL_KEYS.gemini);
    // 100 × $0.30 + 50 × $2.50 per million (gemini-2.5-flash).
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 100,
      outputTokens: 50,
      costUsd: 0.000155,
    });
  });

  it('takes a Gemini token from ?key= and forwards the stream without it', async () => {
    fixture.standIn.behaviour.model = 'gemini-2.5-flash';
    const running = await runningPrompt(fixture, { executor: 'gemini' });
    const path = `/gemini/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=${running.token}`;
    const { received } = await relayed(path, { body: { contents: [] } });
    expect(received.url).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(received.headers['x-goog-api-key']).toBe(REAL_KEYS.gemini);
    expect(await promptUsage(running)).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
  });

  it('adds each call to the task totals by model and to the organization month', async () => {
    const running = await runningPrompt(fixture);
    const before = (await storedOrganization(fixture.api)).status?.usage;
    for (let call = 0; call < 2; call += 1) {
      const res = await gatewayCall(fixture.api, '/anthropic/v1/messages', {
        headers: { 'x-api-key': running.token },
        body: { model: 'claude-sonnet-4-5', messages: [] },
      });
      await res.arrayBuffer();
    }
    const task = await storedTask(fixture.api, running.task.metadata.name);
    expect(task.status?.usage).toMatchObject({
      requests: 2,
      inputTokens: 200,
      outputTokens: 100,
      costUsd: 0.0021,
      byModel: [{ model: defaults.model, provider: 'anthropic', requests: 2, costUsd: 0.0021 }],
    });
    const org = (await storedOrganization(fixture.api)).status?.usage;
    expect(org?.period).toBe(new Date().toISOString().slice(0, 7));
    expect(org?.requests).toBe((before?.requests ?? 0) + 2);
    expect(org?.inputTokens).toBe((before?.inputTokens ?? 0) + 200);
    expect(task.metadata.namespace).toBe(NAMESPACE);
  });

  it('counts a model the price table does not list at no cost, as unpriced', async () => {
    fixture.standIn.behaviour.model = 'claude-experimental-9';
    const running = await runningPrompt(fixture);
    const res = await gatewayCall(fixture.api, '/anthropic/v1/messages', {
      headers: { 'x-api-key': running.token },
      body: { model: 'claude-experimental-9', messages: [] },
    });
    await res.arrayBuffer();
    expect(await promptUsage(running)).toEqual({
      requests: 1,
      inputTokens: 100,
      outputTokens: 50,
      costUsd: 0,
      unpricedRequests: 1,
    });
  });

  it('passes a provider error through unchanged and counts nothing', async () => {
    fixture.standIn.behaviour.failWith = 529;
    const running = await runningPrompt(fixture);
    const res = await gatewayCall(fixture.api, '/anthropic/v1/messages', {
      headers: { 'x-api-key': running.token },
      body: { model: 'claude-sonnet-4-5', messages: [] },
    });
    expect(res.status).toBe(529);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.equals(onlyReceived().sent)).toBe(true);
    expect(await promptUsage(running)).toBeUndefined();
  });
});
