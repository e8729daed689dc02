import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';

/**
 * A STAND-IN for the model providers' APIs (the real providers are unreachable here): a real HTTP
 * server on 127.0.0.1 speaking the documented wire formats the model gateway relays — Anthropic
 * Messages (JSON and SSE), OpenAI Chat Completions (JSON, and SSE with
 * `stream_options.include_usage`) and Responses (JSON and SSE), Gemini generateContent (JSON) and
 * streamGenerateContent?alt=sse. It records every request (method, path with query, headers, body)
 * and the exact bytes it answered, and answers with the usage and model a test configures.
 */

/** Token counts the stand-in reports, in each provider's own terms. */
export interface StandInUsage {
  /** Input tokens not read from or written to the cache. */
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface ReceivedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The bytes the stand-in answered (the whole body, as sent). */
  sent: Buffer;
  /** Whether the connection of the answer has closed (ended, or broken off by the other side). */
  closed: boolean;
}

export interface StandInBehaviour {
  model: string;
  usage: StandInUsage;
  /** Streams end abruptly (the socket destroyed) after this many events. */
  breakAfterEvents?: number;
  /** Streams stop writing after this many events, and never end (a silent provider). */
  silentAfterEvents?: number;
  /** Answer with this status and a provider-shaped error instead. */
  failWith?: number;
}

export interface ModelProviderStandIn {
  url: string;
  received: ReceivedRequest[];
  behaviour: StandInBehaviour;
  close(): Promise<void>;
}

const DEFAULT_BEHAVIOUR: StandInBehaviour = {
  model: 'claude-sonnet-4-5-20250929',
  usage: { input: 100, output: 50, cacheRead: 0, cacheWrite: 0 },
};

/** What the stand-in answers: the events of a stream, or a JSON body. */
type Answer = { events: string[] } | { json: unknown };

const sse = (data: unknown, event?: string): string =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;

function anthropic(stream: boolean, b: StandInBehaviour): Answer {
  const { usage: u, model } = b;
  const usage = {
    input_tokens: u.input,
    output_tokens: u.output,
    cache_read_input_tokens: u.cacheRead,
    cache_creation_input_tokens: u.cacheWrite,
  };
  const content = [{ type: 'text', text: 'Hello from the stand-in' }];
  if (!stream) return { json: { id: 'msg_1', type: 'message', role: 'assistant', model, content, usage } };
  return {
    events: [
      sse(
        {
          type: 'message_start',
          message: { id: 'msg_1', model, content: [], usage: { ...usage, output_tokens: 1 } },
        },
        'message_start',
      ),
      sse(
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        'content_block_start',
      ),
      sse(
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
        'content_block_delta',
      ),
      sse(
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' world' } },
        'content_block_delta',
      ),
      sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
      sse(
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: u.output } },
        'message_delta',
      ),
      sse({ type: 'message_stop' }, 'message_stop'),
    ],
  };
}

function openAiChat(stream: boolean, includeUsage: boolean, b: StandInBehaviour): Answer {
  const { usage: u, model } = b;
  const usage = {
    prompt_tokens: u.input + u.cacheRead,
    completion_tokens: u.output,
    total_tokens: u.input + u.cacheRead + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead },
  };
  if (!stream)
    return {
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
        usage,
      },
    };
  const chunk = (delta: unknown, finish: string | null) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  return {
    events: [
      sse(chunk({ role: 'assistant', content: '' }, null)),
      sse(chunk({ content: 'Hello' }, null)),
      sse(chunk({}, 'stop')),
      ...(includeUsage
        ? [sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model, choices: [], usage })]
        : []),
      sse('[DONE]'),
    ],
  };
}

function openAiResponses(stream: boolean, b: StandInBehaviour): Answer {
  const { usage: u, model } = b;
  const response = {
    id: 'resp_1',
    object: 'response',
    model,
    status: 'completed',
    output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello' }] }],
    usage: {
      input_tokens: u.input + u.cacheRead,
      input_tokens_details: { cached_tokens: u.cacheRead },
      output_tokens: u.output,
      total_tokens: u.input + u.cacheRead + u.output,
    },
  };
  if (!stream) return { json: response };
  return {
    events: [
      sse(
        { type: 'response.created', response: { ...response, status: 'in_progress', usage: null } },
        'response.created',
      ),
      sse({ type: 'response.output_text.delta', delta: 'Hello' }, 'response.output_text.delta'),
      sse({ type: 'response.completed', response }, 'response.completed'),
    ],
  };
}

function gemini(stream: boolean, b: StandInBehaviour): Answer {
  const { usage: u, model } = b;
  const chunk = (text: string, output: number) => ({
    candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }],
    usageMetadata: {
      promptTokenCount: u.input + u.cacheRead,
      candidatesTokenCount: output,
      cachedContentTokenCount: u.cacheRead,
      totalTokenCount: u.input + u.cacheRead + output,
    },
    modelVersion: model,
  });
  if (!stream) return { json: chunk('Hello', u.output) };
  return { events: [sse(chunk('Hel', 1)), sse(chunk('lo', u.output))] };
}

/** What of a request body decides the answer's form. */
const StreamRequestSchema = z.looseObject({
  stream: z.boolean().optional().catch(undefined),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional().catch(undefined),
});

/** The answer to a request: a JSON body, or the events of a stream. */
function answerOf(req: IncomingMessage, body: unknown, b: StandInBehaviour): Answer | undefined {
  const url = new URL(req.url ?? '/', 'http://stand-in');
  const request = StreamRequestSchema.safeParse(body).data ?? {};
  const stream = request.stream === true;
  if (url.pathname === '/v1/messages') return anthropic(stream, b);
  if (url.pathname === '/v1/chat/completions')
    return openAiChat(stream, request.stream_options?.include_usage === true, b);
  if (url.pathname === '/v1/responses') return openAiResponses(stream, b);
  if (/^\/v1beta\/models\/[^/]+:streamGenerateContent$/.test(url.pathname)) return gemini(true, b);
  if (/^\/v1beta\/models\/[^/]+:generateContent$/.test(url.pathname)) return gemini(false, b);
  return undefined;
}

async function writeEvents(
  res: ServerResponse,
  events: string[],
  b: StandInBehaviour,
  record: ReceivedRequest,
) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [index, event] of events.entries()) {
    if (b.breakAfterEvents !== undefined && index >= b.breakAfterEvents) {
      res.socket?.destroy();
      return;
    }
    if (b.silentAfterEvents !== undefined && index >= b.silentAfterEvents) return;
    const bytes = Buffer.from(event);
    record.sent = Buffer.concat([record.sent, bytes]);
    res.write(bytes);
    // Separate writes, so the relay sees events arrive one by one.
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  res.end();
}

/** Starts the stand-in on a free loopback port. */
export async function startModelProviderStandIn(
  behaviour: Partial<StandInBehaviour> = {},
): Promise<ModelProviderStandIn> {
  const received: ReceivedRequest[] = [];
  const state: ModelProviderStandIn = {
    url: '',
    received,
    behaviour: { ...DEFAULT_BEHAVIOUR, ...behaviour },
    close: () => Promise.resolve(),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const record: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text,
        sent: Buffer.alloc(0),
        closed: false,
      };
      received.push(record);
      res.on('close', () => {
        record.closed = true;
      });
      let body: unknown;
      try {
        body = text === '' ? undefined : (JSON.parse(text) as unknown);
      } catch {
        body = undefined;
      }
      const b = state.behaviour;
      const answer = b.failWith === undefined ? answerOf(req, body, b) : undefined;
      if (answer !== undefined && 'events' in answer) {
        void writeEvents(res, answer.events, b, record);
        return;
      }
      const status = b.failWith ?? (answer === undefined ? 404 : 200);
      const payload = Buffer.from(
        JSON.stringify(
          answer?.json ?? {
            type: 'error',
            error: { type: 'not_found_error', message: 'stand-in: no such route' },
          },
        ),
      );
      record.sent = payload;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the stand-in has no port');
  state.url = `http://127.0.0.1:${address.port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => {
        resolve();
      });
    });
  return state;
}
