import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { TaskType } from '../../../crds/index.js';
import { PromptTokens } from '../../../platform/model-gateway/token.js';
import { InstallationKey } from '../../../platform/installation-key.js';
import { eventually } from '../../support/api-server.js';
import {
  NAMESPACE,
  REAL_KEYS,
  gatewayCall,
  runningPrompt,
  setOrganizationBudget,
  startGateway,
  storedTask,
} from './gateway-support.js';
import type { GatewayFixture } from './gateway-support.js';

let fixture: GatewayFixture;

beforeAll(async () => {
  fixture = await startGateway();
});
afterAll(async () => {
  await fixture.stop();
});
beforeEach(() => {
  fixture.standIn.received.length = 0;
});

const anthropicCall = (token: string) =>
  gatewayCall(fixture.api, '/anthropic/v1/messages', {
    headers: { 'x-api-key': token },
    body: { model: 'claude-sonnet-4-5', messages: [] },
  });

/** A 401 in Anthropic's error shape that does not say which check failed. */
async function expectAnthropicUnauthorized(res: Response): Promise<string> {
  expect(res.status).toBe(401);
  const body: unknown = await res.json();
  expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  return JSON.stringify(body);
}

describe('model gateway refusals', () => {
  it('refuses a forged token with 401 and calls no provider', async () => {
    const running = await runningPrompt(fixture);
    const forged = `${running.token.slice(0, -4)}AAAA`;
    await expectAnthropicUnauthorized(await anthropicCall(forged));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses a token signed with another installation key', async () => {
    const running = await runningPrompt(fixture);
    const other = new PromptTokens(new InstallationKey(Buffer.alloc(32, 7)));
    await expectAnthropicUnauthorized(await anthropicCall(other.issue(running.claims)));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses an expired token', async () => {
    const running = await runningPrompt(fixture);
    const expired = fixture.tokens.issue({ ...running.claims, exp: Math.floor(Date.now() / 1000) - 1 });
    await expectAnthropicUnauthorized(await anthropicCall(expired));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses a token naming the task in another organization namespace', async () => {
    const running = await runningPrompt(fixture);
    const otherOrg = fixture.tokens.issue({ ...running.claims, namespace: 'agentry-org-globex' });
    await expectAnthropicUnauthorized(await anthropicCall(otherOrg));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses the token of a prompt that has ended, in the same words as a forged one', async () => {
    const ended = await runningPrompt(fixture, { status: 'succeeded' });
    const endedBody = await expectAnthropicUnauthorized(await anthropicCall(ended.token));
    const forgedBody = await expectAnthropicUnauthorized(await anthropicCall('agp1.bm90.aXQ'));
    expect(endedBody).toBe(forgedBody);
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses the token of a prompt whose cancel was requested', async () => {
    const canceling = await runningPrompt(fixture, { cancelRequested: true });
    await expectAnthropicUnauthorized(await anthropicCall(canceling.token));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('accepts the token of a prompt dispatched but not yet started', async () => {
    const dispatched = await runningPrompt(fixture, { status: 'pending' });
    const res = await anthropicCall(dispatched.token);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(fixture.standIn.received).toHaveLength(1);
  });

  it('accepts the token of a prompt the operator has not recorded yet: the executor starts before that write', async () => {
    const unrecorded = await runningPrompt(fixture, { status: 'unrecorded' });
    const res = await anthropicCall(unrecorded.token);
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(fixture.standIn.received).toHaveLength(1);
  });

  it('refuses the token of a deleted task', async () => {
    const running = await runningPrompt(fixture);
    const task = await storedTask(fixture.api, running.task.metadata.name);
    const deleted = await fixture.api.store.replace(TaskType, {
      ...task,
      spec: { ...task.spec, deletedAt: new Date().toISOString() },
    });
    await eventually(
      () =>
        fixture.api.readModel.tasks.get(NAMESPACE, deleted.metadata.name)?.metadata.resourceVersion ===
        deleted.metadata.resourceVersion,
    );
    await expectAnthropicUnauthorized(await anthropicCall(running.token));
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('answers 401 in OpenAI shape without a token, and in Gemini shape with a bad one', async () => {
    const openai = await gatewayCall(fixture.api, '/openai/v1/chat/completions', { body: {} });
    expect(openai.status).toBe(401);
    expect(await openai.json()).toMatchObject({
      error: { code: 'unauthorized', type: 'invalid_request_error' },
    });
    const gemini = await gatewayCall(fixture.api, '/gemini/v1beta/models/m:generateContent', {
      headers: { 'x-goog-api-key': 'not-a-token' },
      body: {},
    });
    expect(gemini.status).toBe(401);
    expect(await gemini.json()).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('says no key is configured when the executor has no route to the provider', async () => {
    // The shell executor calls no model provider through the gateway.
    const running = await runningPrompt(fixture, { executor: 'shell' });
    const res = await anthropicCall(running.token);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({
      error: { message: 'no anthropic key is configured for this organization' },
    });
    expect(fixture.standIn.received).toHaveLength(0);
  });

  it('refuses a call once the task budget is reached with 429, and marks the prompt', async () => {
    const running = await runningPrompt(fixture, { budget: { maxTokens: 100 } });
    const first = await anthropicCall(running.token);
    expect(first.status).toBe(200);
    await first.arrayBuffer();
    // The call that reached the budget completed, and marked the prompt.
    let task = await storedTask(fixture.api, running.task.metadata.name);
    expect(task.status?.prompts?.[0]?.budgetExceeded).toBe('task');
    const second = await anthropicCall(running.token);
    expect(second.status).toBe(429);
    expect(await second.json()).toMatchObject({
      type: 'error',
      error: { type: 'budget_exceeded', message: 'the model budget of the task is reached' },
    });
    expect(fixture.standIn.received).toHaveLength(1);
    task = await storedTask(fixture.api, running.task.metadata.name);
    expect(task.status?.usage?.requests).toBe(1);
  });

  it('refuses a call once the organization month budget is reached, marking the prompt organization', async () => {
    const running = await runningPrompt(fixture, { executor: 'codex' });
    await setOrganizationBudget(fixture.api, { maxCostUsd: 0.000001 });
    try {
      // Spend something this month first (another prompt of the organization).
      const spender = await runningPrompt(fixture);
      await (await anthropicCall(spender.token)).arrayBuffer();
      fixture.standIn.received.length = 0;
      const refused = await gatewayCall(fixture.api, '/openai/v1/chat/completions', {
        headers: { authorization: `Bearer ${running.token}` },
        body: { model: 'gpt-5', messages: [] },
      });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({
        error: { code: 'budget_exceeded', message: 'the model budget of the organization is reached' },
      });
      expect(fixture.standIn.received).toHaveLength(0);
      const task = await storedTask(fixture.api, running.task.metadata.name);
      expect(task.status?.prompts?.[0]?.budgetExceeded).toBe('organization');
    } finally {
      await setOrganizationBudget(fixture.api, {});
    }
  });

  it('refuses a body over the limit with 413 in the provider shape, calling no provider', async () => {
    const small = await startGateway({ maxBodyBytes: 1024 });
    try {
      const running = await runningPrompt(small);
      const res = await gatewayCall(small.api, '/anthropic/v1/messages', {
        headers: { 'x-api-key': running.token },
        body: { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'x'.repeat(4096) }] },
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'request_too_large' } });
      expect(small.standIn.received).toHaveLength(0);
    } finally {
      await small.stop();
    }
  });

  it('never names the token or the key in its log lines', async () => {
    const lines: string[] = [];
    const logged = await startGateway({ logDestination: { write: (line) => lines.push(line) } });
    try {
      const running = await runningPrompt(logged, { executor: 'gemini' });
      const path = `/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=${running.token}`;
      const res = await gatewayCall(logged.api, path, { body: {} });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const log = lines.join('\n');
      expect(log).toContain('/model-gateway/gemini/');
      expect(log).not.toContain(running.token);
      expect(log).not.toContain(REAL_KEYS.gemini);
    } finally {
      await logged.stop();
    }
  });
});
