// Workspaces through the REST API, as a client drives them: create, wait for a status, stop, delete.
import { z } from 'zod';
import { AgentComputerType } from '../../crds/index.js';
import { call } from '../../test/support/api-server.js';
import type { Endpoint } from '../task-latency/client.js';
import { interruption } from '../task-latency/config.js';
import { until } from '../support/wait.js';
import type { Target } from './target.js';

const RecordSchema = z.object({ id: z.string(), status: z.string() });

async function request(
  endpoint: Endpoint,
  method: string,
  path: string,
  expected: readonly number[],
): Promise<Response> {
  const res = await call(endpoint.api, path, {
    key: endpoint.key,
    method,
    ...(method === 'POST' ? { body: {} } : {}),
  });
  if (!expected.includes(res.status))
    throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res;
}

/** POST /v1/agent-computers: a persistent workspace; answers its id. */
export async function createWorkspace(endpoint: Endpoint): Promise<string> {
  const res = await request(endpoint, 'POST', '/v1/agent-computers', [201]);
  return RecordSchema.parse(await res.json()).id;
}

/** Polls GET /v1/agent-computers/:id until its status is `status`. */
export async function waitForStatus(
  endpoint: Endpoint,
  id: string,
  status: string,
  timeoutMs: number,
): Promise<void> {
  let last = 'unknown';
  await until(
    `workspace ${id} to be ${status}`,
    timeoutMs,
    async () => {
      const res = await request(endpoint, 'GET', `/v1/agent-computers/${id}`, [200]);
      last = RecordSchema.parse(await res.json()).status;
      return last === status ? true : undefined;
    },
    { signal: interruption.signal, pollMs: 25, state: () => `it is ${last}` },
  );
}

/** POST /v1/agent-computers/:id/stop, then waits until it is hibernated. */
export async function hibernate(endpoint: Endpoint, id: string, timeoutMs: number): Promise<void> {
  await (await request(endpoint, 'POST', `/v1/agent-computers/${id}/stop`, [202])).arrayBuffer();
  await waitForStatus(endpoint, id, 'hibernated', timeoutMs);
}

/** DELETE /v1/agent-computers/:id, then waits until it is gone from the store (its workload stopped). */
export async function deleteWorkspace(target: Target, id: string): Promise<void> {
  await (
    await request(target.endpoint, 'DELETE', `/v1/agent-computers/${id}`, [200, 202, 204])
  ).arrayBuffer();
  await until(
    `workspace ${id} to be removed`,
    target.sizes.settleMs,
    async () =>
      (await target.store.get(AgentComputerType, target.namespace, id)) === undefined ? true : undefined,
    { signal: interruption.signal, pollMs: 25 },
  );
}
