// A warm-pool member made by the operator's pool controller and made Ready by the process runtime
// (a real runner process) is claimed by a task, whose `init` event then arrives, and the pool
// makes another (docs/adr/0008-warm-pools.md).
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { z } from 'zod';
import { isClaimable } from '../../api/workspace-pool/members.js';
import { call, eventually } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { POOL_LABEL } from '../../crds/index.js';
import { createPool } from '../support/pool-members.js';
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
  await createPool(api.store, NAMESPACE, { name: 'e2e', minReady: 1 });
  const members = () =>
    api.readModel.agentComputers.list(NAMESPACE).filter((ac) => ac.metadata.labels?.[POOL_LABEL] === 'e2e');
  let ready = '';
  await eventually(() => {
    ready = members().find((ac) => isClaimable(ac, {}))?.metadata.name ?? '';
    return ready !== '';
  }, 60_000);

  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: 'echo from the pool' },
  });
  expect(res.status).toBe(201);
  const task = CreatedSchema.parse(await res.json());
  expect(task.workspaceId).toBe(ready);
  const stream = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, {
    key,
    timeoutMs: 60_000,
  });
  expect(stream.events.map((event) => event.eventType)).toContain('init');
  expect(stream.done?.status).toBe('completed');
  // The pool refills: a new member besides the claimed one.
  await eventually(() => members().some((ac) => ac.metadata.name !== ready && isClaimable(ac, {})), 60_000);
}, 120_000);
