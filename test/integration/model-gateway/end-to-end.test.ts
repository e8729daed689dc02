// The whole path on the embedded default, as a CLI in a workspace uses it: `agentry serve` as a
// real child process dispatches a prompt whose executor has an anthropic model route; the prompt
// (the executor stands in for an agent CLI: bash running curl against ANTHROPIC_BASE_URL with
// ANTHROPIC_API_KEY, as Claude Code would) streams a message through the model gateway to the
// provider stand-in. The provider receives the real key, the task and its `result` event carry
// the gateway's count, and a task budget stops the prompt with budget_exceeded.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { startModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import type { ModelProviderStandIn } from '../../support/model-provider-stand-in.js';
import { startServeProcess, stopChild } from '../../support/spawn-cli.js';
import { until } from '../../support/until.js';
import { routedShellExecutor } from '../../support/routed-shell-executor.js';

const FAKE_KEY = `sk-ant-e2e-${randomBytes(12).toString('hex')}`;
const API_KEY = 'gateway-e2e-test-key-0123456789abcdef';

const EXECUTORS = { executors: [routedShellExecutor('curlclaude')] };

/** One streamed Messages call, the way Claude Code makes it (key in x-api-key, base URL without /v1). */
const MODEL_CALL = [
  'curl -sS -N --fail-with-body "$ANTHROPIC_BASE_URL/v1/messages"',
  '-H "x-api-key: $ANTHROPIC_API_KEY" -H "anthropic-version: 2023-06-01" -H "content-type: application/json"',
  `-d '{"model":"claude-sonnet-4-5","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}'`,
].join(' ');

let provider: ModelProviderStandIn;
let url = '';
let child: ChildProcessWithoutNullStreams | undefined;
let root = '';
const headers = { 'api-key': API_KEY, 'content-type': 'application/json' };

beforeAll(async () => {
  provider = await startModelProviderStandIn({
    model: 'claude-sonnet-4-5-20250929',
    usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0 },
  });
  root = await mkdtemp(join(tmpdir(), 'agentry-gateway-e2e-'));
  const executorsFile = join(root, 'executors.json');
  await writeFile(executorsFile, JSON.stringify(EXECUTORS));
  ({ url, child } = await startServeProcess({
    AGENTRY_DATA_DIR: join(root, 'data'),
    AGENTRY_EXECUTORS_FILE: executorsFile,
    AGENTRY_API_KEY: API_KEY,
    AGENTRY_MODEL_UPSTREAMS: JSON.stringify({ anthropic: provider.url }),
    // The embedded default takes an executor's key from its own environment when no Secret holds it.
    ANTHROPIC_API_KEY: FAKE_KEY,
  }));
}, 90_000);

afterAll(async () => {
  if (child !== undefined) await stopChild(child);
  await provider.close();
  await rm(root, { recursive: true, force: true });
});

const UsageSchema = z.looseObject({
  requests: z.number(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
});
const TaskSchema = z.looseObject({
  status: z.string(),
  usage: UsageSchema.nullable(),
  prompts: z.array(
    z.looseObject({
      usage: UsageSchema.nullable(),
      failureReason: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
});

async function runTask(
  prompt: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; task: z.infer<typeof TaskSchema> }> {
  const res = await fetch(`${url}/v1/tasks`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ executor: 'curlclaude', prompt, ...extra }),
  });
  expect(res.status).toBe(201);
  const { id } = z.object({ id: z.string() }).parse(await res.json());
  const task = await until(
    'the task to end',
    async () => {
      const read = TaskSchema.parse(await (await fetch(`${url}/v1/tasks/${id}`, { headers })).json());
      return read.status === 'running' ? undefined : read;
    },
    90_000,
  );
  return { id, task };
}

describe('a CLI in a workspace calling its provider through the model gateway', () => {
  it('reaches the provider with the real key, streams the answer, and the task and result event carry the count', async () => {
    const before = provider.received.length;
    const { id, task } = await runTask(MODEL_CALL);
    // The prompt's error, if any, in the message.
    expect({ status: task.status, error: task.prompts[0]?.error }).toEqual({
      status: 'completed',
      error: null,
    });
    const calls = provider.received.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.headers['x-api-key']).toBe(FAKE_KEY);
    expect(calls[0]?.url).toBe('/v1/messages');
    expect(task.usage).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
    expect(task.usage?.costUsd).toBeGreaterThan(0);
    expect(task.prompts[0]?.usage).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
    const events = await (await fetch(`${url}/v1/tasks/${id}/events?all=true`, { headers })).text();
    // The provider's stream reached the CLI (curl printed it; the lines executor made it events).
    expect(events).toContain('message_stop');
    const result = events
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => z.looseObject({ eventType: z.string().optional() }).safeParse(JSON.parse(line.slice(6))))
      .flatMap((parsed) => (parsed.success ? [parsed.data] : []))
      .find((event) => event.eventType === 'result');
    expect(result).toMatchObject({
      payload: { metered: { requests: 1, inputTokens: 100, outputTokens: 50 } },
    });
  }, 120_000);

  it('stops a prompt whose task budget is reached: failed with budget_exceeded, and no call after the budget', async () => {
    const before = provider.received.length;
    // 150 tokens per call: the first reaches the budget of 100; the second must never reach the provider.
    const { task } = await runTask(`${MODEL_CALL}\nsleep 5\n${MODEL_CALL}\necho after`, {
      budget: { maxTokens: 100 },
    });
    expect(task.status).toBe('failed');
    expect(task.prompts[0]?.failureReason).toBe('budget_exceeded');
    expect(task.prompts[0]?.error).toMatch(/budget/);
    expect(provider.received.length - before).toBe(1);
    expect(task.usage).toMatchObject({ requests: 1, inputTokens: 100, outputTokens: 50 });
  }, 120_000);
});
