import type { IncomingMessage, ServerResponse } from 'node:http';
import { SseRelay } from './sse-relay.js';
import type { CallUsage, UsageReader } from './usage/call-usage.js';
import { downstreamHeaders } from './upstream.js';

/** How relaying the provider's answer ended. */
export type RelayEnd =
  /** The client got the whole answer (its usage recorded first, when it was a success). */
  | 'complete'
  /** The provider broke off or went silent, or the usage could not be recorded: the client's answer is cut. */
  | 'upstream_failed'
  /** Nothing was sent (a buffered answer broke off, or its usage could not be recorded): the caller answers 502. */
  | 'not_answered'
  /** The client left before the end. */
  | 'client_gone';

export interface RelayOptions {
  reader: UsageReader;
  /** Records a successful call's usage; the answer's end waits for it. */
  record: (usage: CallUsage) => Promise<void>;
  /** Bound of a buffered JSON answer and of one event of a stream. */
  maxBytes: number;
  /** Told why recording failed (logged by the caller, never sent to the client). */
  onRecordError: (err: unknown) => void;
}

/** Writes text, waiting while the client's socket is full (a slow client slows the provider, not memory). */
async function write(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  if (res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;
const isEventStream = (upstream: IncomingMessage): boolean =>
  (upstream.headers['content-type'] ?? '').toLowerCase().startsWith('text/event-stream');

/**
 * Passes the provider's answer to the client unchanged (status, headers, bytes). A success has its
 * usage recorded before its end is sent: a stream's final event, or a JSON body, waits for the
 * write (ADR 0009). A failure is passed through as it is and counted nowhere.
 */
export async function relayAnswer(
  upstream: IncomingMessage,
  res: ServerResponse,
  options: RelayOptions,
): Promise<RelayEnd> {
  const status = upstream.statusCode ?? 502;
  try {
    if (!isSuccess(status)) return await passThrough(upstream, res, status);
    if (isEventStream(upstream)) return await relayStream(upstream, res, status, options);
    return await relayBuffered(upstream, res, status, options);
  } catch {
    if (res.destroyed && !res.writableFinished) return 'client_gone';
    if (!res.headersSent) return 'not_answered';
    res.destroy();
    return 'upstream_failed';
  }
}

async function passThrough(
  upstream: IncomingMessage,
  res: ServerResponse,
  status: number,
): Promise<RelayEnd> {
  res.writeHead(status, downstreamHeaders(upstream.headers));
  for await (const chunk of upstream as AsyncIterable<Buffer>) await write(res, chunk);
  res.end();
  return 'complete';
}

async function relayStream(
  upstream: IncomingMessage,
  res: ServerResponse,
  status: number,
  options: RelayOptions,
): Promise<RelayEnd> {
  res.writeHead(status, { ...downstreamHeaders(upstream.headers), 'x-accel-buffering': 'no' });
  res.flushHeaders();
  const out: string[] = [];
  const relay = new SseRelay({
    write: (text) => out.push(text),
    read: (event) => {
      options.reader.readEvent(event);
    },
    isFinal: (event) => options.reader.isFinal(event),
    maxEventBytes: options.maxBytes,
  });
  try {
    for await (const chunk of upstream as AsyncIterable<Buffer>) {
      relay.push(chunk);
      if (out.length > 0) await write(res, out.splice(0).join(''));
    }
  } catch (err) {
    await recordCutShort(options);
    throw err;
  }
  const rest = relay.finish();
  if (out.length > 0) await write(res, out.splice(0).join(''));
  try {
    await options.record(options.reader.usage());
  } catch (err) {
    options.onRecordError(err);
    // The client must not see a complete answer that was not counted: the stream ends abnormally.
    res.destroy();
    return 'upstream_failed';
  }
  res.end(rest);
  return 'complete';
}

/**
 * A stream that broke off (the client left, the provider died or went silent) still used what it
 * reported so far, and providers bill it: count that, so leaving calls early cannot slip past a
 * budget. Best effort: the call has failed already, a failed write is only logged.
 */
async function recordCutShort(options: RelayOptions): Promise<void> {
  const usage = options.reader.usage();
  const reported = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
  if (reported === 0) return;
  await options.record(usage).catch(options.onRecordError);
}

async function relayBuffered(
  upstream: IncomingMessage,
  res: ServerResponse,
  status: number,
  options: RelayOptions,
): Promise<RelayEnd> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of upstream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > options.maxBytes) throw new Error('the answer is over the size limit');
    chunks.push(chunk);
  }
  const body = Buffer.concat(chunks, size);
  options.reader.readJson(jsonOf(body));
  try {
    await options.record(options.reader.usage());
  } catch (err) {
    options.onRecordError(err);
    return 'not_answered';
  }
  res.writeHead(status, downstreamHeaders(upstream.headers));
  res.end(body);
  return 'complete';
}

const jsonOf = (body: Buffer): unknown => {
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
};
