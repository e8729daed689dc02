import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import { TaskEventSchema } from '../../platform/runner-protocol.js';
import type { TaskEvent } from '../../platform/runner-protocol.js';

export const DoneSchema = z.object({
  status: z.enum(['running', 'completed', 'failed', 'canceled']),
  lastSeq: z.number().int(),
  finalResult: z.string().nullable(),
});
export type Done = z.infer<typeof DoneSchema>;

export interface StreamRead {
  /** Execution events in arrival order, each with the SSE `id` it came with. */
  events: (TaskEvent & { sseId: string | undefined })[];
  done: Done | undefined;
  status: number;
  headers: Headers;
}

/**
 * Reads GET /v1/tasks/:id/events as a client would: until `done` arrives (the server closes), until
 * `stopAfter` events were read (then the client hangs up), or until `timeoutMs` passes (an error).
 */
export async function readTaskStream(
  url: string,
  options: { key: string; lastEventId?: number; stopAfter?: number; timeoutMs?: number },
): Promise<StreamRead> {
  const abort = new AbortController();
  const timer = setTimeout(() => {
    abort.abort(new Error(`the stream did not finish within ${options.timeoutMs ?? 60_000} ms`));
  }, options.timeoutMs ?? 60_000);
  const headers: Record<string, string> = { 'api-key': options.key, accept: 'text/event-stream' };
  if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
  const result: StreamRead = { events: [], done: undefined, status: 0, headers: new Headers() };
  try {
    const response = await fetch(url, { headers, signal: abort.signal });
    result.status = response.status;
    result.headers = response.headers;
    if (!response.ok || response.body === null) return result;
    const parser = createParser({
      onEvent(message) {
        if (message.event === 'done') result.done = DoneSchema.parse(JSON.parse(message.data));
        else result.events.push({ ...TaskEventSchema.parse(JSON.parse(message.data)), sseId: message.id });
      },
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
      if (result.done !== undefined) break;
      if (options.stopAfter !== undefined && result.events.length >= options.stopAfter) break;
    }
    return result;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}
