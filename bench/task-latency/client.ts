// Tasks through the API, as a client uses it: POST /v1/tasks, the event stream, workspace deletion.
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { AgentComputerType } from '../../crds/index.js';
import { TaskEventSchema } from '../../platform/runner-protocol.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { call } from '../../test/support/api-server.js';
import type { TestApi } from '../../test/support/api-server.js';
import { wallMs } from '../support/child.js';
import { until } from '../support/wait.js';
import { NAMESPACE, TIMEOUT_MS, interruption } from './config.js';

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });
const DoneSchema = z.object({ status: z.string(), lastSeq: z.number(), finalResult: z.string().nullable() });

/** Where tasks are sent: an API server's URL and a key (another bench's server, or one on a real node). */
export interface Endpoint {
  api: Pick<TestApi, 'url'>;
  key: string;
}

export interface Client extends Endpoint {
  api: TestApi;
}

export async function createTask(
  client: Endpoint,
  body: { prompt: string; workspaceId?: string },
): Promise<z.infer<typeof CreatedSchema>> {
  const res = await call(client.api, '/v1/tasks', {
    key: client.key,
    method: 'POST',
    body: { executor: 'shell', ...body },
  });
  const text = await res.text();
  if (res.status !== 201) throw new Error(`POST /v1/tasks answered ${res.status}: ${text}`);
  return CreatedSchema.parse(JSON.parse(text));
}

/**
 * Reads GET /v1/tasks/:id/events until `done`, calling `onEvent` with each event and the wall time
 * its chunk arrived (taken before parsing). Rejects on a non-200 answer, a stream that ends without
 * `done`, or `signal`.
 */
export async function readEvents(
  client: Endpoint,
  taskId: string,
  signal: AbortSignal,
  onEvent: (event: TaskEvent, arrival: number) => void,
): Promise<z.infer<typeof DoneSchema>> {
  const abort = new AbortController();
  const stop = (): void => {
    abort.abort(signal.reason);
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    const res = await fetch(`${client.api.url}/v1/tasks/${taskId}/events`, {
      headers: { 'api-key': client.key, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    if (res.status !== 200 || res.body === null) {
      throw new Error(`GET /v1/tasks/${taskId}/events answered ${res.status}: ${await res.text()}`);
    }
    let done: z.infer<typeof DoneSchema> | undefined;
    let arrival = 0;
    const parser = createParser({
      onEvent(message) {
        const data: unknown = JSON.parse(message.data);
        if (message.event === 'done') done = DoneSchema.parse(data);
        else onEvent(TaskEventSchema.parse(data), arrival);
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      arrival = wallMs();
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (done !== undefined) return done;
    }
    throw new Error(`the event stream of task ${taskId} ended without done`);
  } finally {
    signal.removeEventListener('abort', stop);
    abort.abort();
  }
}

export async function deleteWorkspace(client: Client, id: string): Promise<void> {
  const res = await call(client.api, `/v1/agent-computers/${id}`, { key: client.key, method: 'DELETE' });
  if (res.status !== 204 && res.status !== 200 && res.status !== 202)
    throw new Error(`DELETE /v1/agent-computers/${id} answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
  // Gone from the store once the operator has stopped its runner: nothing of it overlaps the next task.
  await until(
    `workspace ${id} to be removed`,
    TIMEOUT_MS,
    async () =>
      (await client.api.store.get(AgentComputerType, NAMESPACE, id)) === undefined ? true : undefined,
    { signal: interruption.signal, pollMs: 20 },
  );
}
