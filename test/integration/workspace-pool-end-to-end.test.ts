// A warm-pool member made Ready by the real operator and process runtime (a real runner process)
// is claimed by a task, whose `init` event then arrives (docs/adr/0008-warm-pools.md). The
// member is made by hand as the pool controller would make it (its pool keeps one, so a pool
// controller, once the operator runs one, keeps this member rather than deleting it as surplus).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { z } from 'zod';
import { isClaimable } from '../../api/workspace-pool/members.js';
import { call, eventually } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { addPoolMember, createPool } from '../support/pool-members.js';
import { readTaskStream } from '../support/sse.js';

const NAMESPACE = 'agentry-org-acme';
const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
let stack: EmbeddedStack;
let key: string;

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-pool-e2e-' });
  key = await stack.api.key({ org: 'acme' });
}, 60_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

it('runs a task on a member the operator made ready, and its init event arrives', async () => {
  const { api } = stack;
  const pool = await createPool(api.store, NAMESPACE, { name: 'e2e', minReady: 1 });
  await addPoolMember(api.store, pool, 'warm-1', { runtime: 'process', ready: false });
  await eventually(() => {
    const cached = api.readModel.agentComputers.get(NAMESPACE, 'warm-1');
    return cached !== undefined && isClaimable(cached, {});
  }, 60_000);

  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: 'echo from the pool' },
  });
  expect(res.status).toBe(201);
  const task = CreatedSchema.parse(await res.json());
  expect(task.workspaceId).toBe('warm-1');
  const stream = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, {
    key,
    timeoutMs: 60_000,
  });
  expect(stream.events.map((event) => event.eventType)).toContain('init');
  expect(stream.done?.status).toBe('completed');
}, 120_000);
