import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import type { ModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import { gatewayCall, runningPrompt, startGateway } from './gateway-support.js';

let standIn: ModelProviderStandIn;
beforeAll(async () => {
  standIn = await startModelProviderStandIn();
});
afterAll(async () => {
  await standIn.close();
});

describe('model gateway keys in the embedded default', () => {
  it("injects the serve process's own key variable when the organization has no Secret", async () => {
    const embedded = await startGateway({
      standIn,
      secrets: false,
      keyFallback: { ANTHROPIC_API_KEY: 'sk-ant-of-whoever-runs-serve' },
    });
    try {
      const running = await runningPrompt(embedded);
      const res = await gatewayCall(embedded.api, '/anthropic/v1/messages', {
        headers: { 'x-api-key': running.token },
        body: { model: 'claude-sonnet-4-5', messages: [] },
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect(standIn.received.at(-1)?.headers['x-api-key']).toBe('sk-ant-of-whoever-runs-serve');
    } finally {
      await embedded.stop();
    }
  });

  it('answers 401 naming the provider when neither a Secret nor the environment has a key', async () => {
    const bare = await startGateway({ standIn, secrets: false });
    try {
      const running = await runningPrompt(bare, { executor: 'gemini' });
      const before = standIn.received.length;
      const res = await gatewayCall(bare.api, '/gemini/v1beta/models/gemini-2.5-flash:generateContent', {
        headers: { 'x-goog-api-key': running.token },
        body: {},
      });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({
        error: {
          code: 401,
          message: 'no gemini key is configured for this organization',
          status: 'UNAUTHENTICATED',
        },
      });
      expect(standIn.received).toHaveLength(before);
    } finally {
      await bare.stop();
    }
  });
});
