// Kill -9 of `agentry serve` (API + operator) with webhook deliveries pending: after a restart every
// one still arrives. A real receiver on loopback refuses deliveries until the crash, then accepts.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { killHard, startServeProcess, stopChild } from '../support/spawn-cli.js';
import { WebhookReceiver, verifyDelivery } from '../support/webhook-receiver.js';

const KEY = 'webhook-crash-key-0123456789abcdef';
const children: ChildProcessWithoutNullStreams[] = [];
const dirs: string[] = [];
const receiver = new WebhookReceiver();

afterEach(async () => {
  await receiver.stop();
  await Promise.all(children.splice(0).map(stopChild));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}, 60_000);

async function startServe(dataDir: string): Promise<{ url: string; child: ChildProcessWithoutNullStreams }> {
  const started = await startServeProcess({
    AGENTRY_DATA_DIR: dataDir,
    AGENTRY_API_KEY: KEY,
    AGENTRY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,500ms,1s,1s,2s,2s,5s,5s,5s',
  });
  children.push(started.child);
  return started;
}

const headers = { 'x-api-key': KEY, 'content-type': 'application/json' };

async function request(url: string, path: string, method = 'GET', body?: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('kill -9 of agentry serve with webhook deliveries pending', () => {
  it('delivers every one of them after the restart', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'agentry-webhook-crash-'));
    dirs.push(dataDir);
    receiver.respond = () => 503;
    await receiver.start();
    const first = await startServe(dataDir);
    const registered = await request(first.url, '/v1/webhooks', 'POST', {
      url: receiver.url,
      events: ['task.created', 'task.running', 'task.completed'],
    });
    expect(registered.status).toBe(201);
    const created = await request(first.url, '/v1/tasks', 'POST', {
      executor: 'shell',
      prompt: 'echo crash',
    });
    const taskId = ((await created.json()) as { id: string }).id;
    // Every transition has been attempted (and refused) at least once: all three are pending.
    const deadline = Date.now() + 60_000;
    while (
      new Set(receiver.received.filter((d) => d.rawBody.includes(taskId)).map((d) => d.headers['webhook-id']))
        .size < 3
    ) {
      if (Date.now() > deadline) throw new Error('the deliveries were never attempted');
      await sleep(100);
    }
    await killHard(first.child);
    children.splice(children.indexOf(first.child), 1);

    receiver.respond = () => 200;
    const second = await startServe(dataDir);
    const document = await request(second.url, '/v1/webhooks/public_key');
    const { publicKeyPem } = (await document.json()) as { publicKeyPem: string };
    const until = Date.now() + 60_000;
    while (receiver.accepted().filter((d) => d.taskId === taskId).length < 3) {
      if (Date.now() > until)
        throw new Error(`arrived: ${JSON.stringify(receiver.accepted().map((d) => d.event))}`);
      await sleep(100);
    }
    const accepted = receiver.accepted().filter((d) => d.taskId === taskId);
    expect(new Set(accepted.map((d) => d.event))).toEqual(
      new Set(['task.created', 'task.running', 'task.completed']),
    );
    for (const { delivery } of accepted) expect(verifyDelivery(delivery, publicKeyPem)).toBe(true);
  }, 180_000);
});
