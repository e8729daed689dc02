// Killing the leading operator Pod mid-prompt on the real node: the standby replica takes the Lease,
// finds the prompt running in the runner (the source of truth) instead of dispatching it again, and
// records it once; the task's webhook deliveries still all arrive.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import {
  api,
  createTask,
  deployment,
  eventually,
  kubectl,
  streamTask,
  streamText,
  TaskSchema,
} from './support.js';
import { readTaskStream } from '../support/sse.js';

const receiver = new WebhookReceiver(deployment().nodeIp);
let webhookId = '';
let workspaceId = '';

beforeAll(async () => {
  await receiver.start();
  const res = await api('/v1/webhooks', {
    method: 'POST',
    body: { url: receiver.url, events: ['task.running', 'task.completed', 'task.failed'] },
  });
  expect(res.status).toBe(201);
  webhookId = z.looseObject({ id: z.string() }).parse(res.body).id;
});

afterAll(async () => {
  if (webhookId !== '') await api(`/v1/webhooks/${webhookId}`, { method: 'DELETE' }).catch(() => undefined);
  if (workspaceId !== '')
    await api(`/v1/agent-computers/${workspaceId}`, { method: 'DELETE' }).catch(() => undefined);
  await receiver.stop();
}, 120_000);

async function leaderPod(): Promise<string> {
  const d = deployment();
  const holder = await kubectl([
    'get',
    'lease',
    'agentry-operator',
    '-n',
    d.namespace,
    '-o',
    'jsonpath={.spec.holderIdentity}',
  ]);
  // The identity is `<hostname>_<pid>_<random>`, and a Pod's hostname is its name.
  return holder.split('_')[0] ?? '';
}

describe('operator failover on the real node', () => {
  it('records a prompt once and loses no delivery when the leading operator Pod is killed mid-prompt', async () => {
    const d = deployment();
    const task = await createTask({
      prompt: 'for i in $(seq 1 20); do echo tick $i; sleep 1; done; echo finished',
    });
    workspaceId = task.workspaceId;
    const started = await readTaskStream(`${d.apiUrl}/v1/tasks/${task.id}/events`, {
      key: d.apiKey,
      stopAfter: 3,
      timeoutMs: 180_000,
    });
    expect(started.events.length).toBeGreaterThanOrEqual(3);

    const killed = await leaderPod();
    expect(killed).not.toBe('');
    await kubectl(['delete', 'pod', killed, '-n', d.namespace, '--grace-period=0', '--force']);

    const stream = await streamTask(task.id, { timeoutMs: 240_000 });
    expect(stream.done?.status).toBe('completed');
    const text = streamText(stream);
    expect(text).toContain('tick 20');
    expect(text).toContain('finished');
    // The prompt ran once: every tick once, in order, and no seq twice.
    expect(text.match(/tick 1\b/g)).toHaveLength(1);
    const seqs = stream.events.map((event) => event.seq);
    expect(new Set(seqs).size).toBe(seqs.length);

    const record = TaskSchema.parse((await api(`/v1/tasks/${task.id}`)).body);
    expect(record.status).toBe('completed');
    expect(record.prompts).toHaveLength(1);
    expect(await leaderPod()).not.toBe(killed);

    const events = await eventually('task.running and task.completed delivered', () => {
      const mine = receiver.accepted().filter((delivery) => delivery.taskId === task.id);
      const names = new Set(mine.map((delivery) => delivery.event));
      return Promise.resolve(names.has('task.running') && names.has('task.completed') ? names : undefined);
    });
    expect(events.has('task.failed')).toBe(false);
  }, 300_000);
});
