// The runner's SSE stream's writes: against a client that stops reading it is paused with a bounded
// buffer and caught up from the log once it reads again, never cut and never sent an event twice; a
// burst of events leaves in a few writes, not one per event.
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import express from 'express';
import type { Response } from 'express';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../platform/log.js';
import { TaskEventLog } from '../../runner/event-log.js';
import { streamTaskEvents } from '../../runner/sse.js';

const logger = createLogger({ level: 'silent' });
/** About 12 MiB of frames: more than the old 8 MiB cut-off plus the socket buffers. */
const EVENTS = 12_000;
const PADDING = 'x'.repeat(1000);

let stateDir: string;
let log: TaskEventLog;
let server: Server;
let streamed: Response | undefined;

beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'agentry-sse-backpressure-'));
  log = new TaskEventLog({ stateDir, logger });
  const app = express();
  app.get('/events/:taskId', async (req, res) => {
    streamed = res;
    await streamTaskEvents(res, {
      events: log,
      taskId: req.params.taskId,
      filter: {},
      keepaliveMs: 60_000,
      logger,
    });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  await log.close();
  await rm(stateDir, { recursive: true, force: true });
});

const openStream = async (taskId: string): Promise<IncomingMessage> => {
  const { port } = server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: `/events/${taskId}`, headers: { accept: 'text/event-stream' } })
      .on('response', resolve)
      .on('error', reject)
      .end();
  });
};

/** Reads `id:` lines until the one of seq `last`; rejects if the stream ends first. */
const readIds = (res: IncomingMessage, last: number): Promise<number[]> =>
  new Promise((resolve, reject) => {
    const ids: number[] = [];
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('id: ')) ids.push(Number(line.slice(4)));
      if (ids.at(-1) === last) resolve(ids);
    });
    res.on('end', () => {
      reject(new Error(`the stream ended after ${ids.length} events`));
    });
    res.on('error', reject);
    res.resume();
  });

describe('runner SSE: a client that stops reading', () => {
  it('gets every event once, in order, after it reads again, while the runner buffers at most a socket buffer', async () => {
    const taskId = randomUUID();
    const promptId = randomUUID();
    await log.append(taskId, promptId, 'text', { content: 'first' });
    const res = await openStream(taskId);
    res.pause();
    let maxBuffered = 0;
    const appends = Array.from({ length: EVENTS - 1 }, async (_, i) => {
      await log.append(taskId, promptId, 'text', { content: `${i} ${PADDING}` });
      maxBuffered = Math.max(maxBuffered, streamed?.writableLength ?? 0);
    });
    await Promise.all(appends);
    const ids = await readIds(res, EVENTS - 1);
    expect(ids).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
    expect(maxBuffered).toBeLessThan(1024 * 1024);
  });
});

describe('runner SSE: writes', () => {
  it('writes a burst of events made durable together in a few writes, every event once and in order', async () => {
    const taskId = randomUUID();
    const promptId = randomUUID();
    await log.append(taskId, promptId, 'text', { content: 'first' });
    const res = await openStream(taskId);
    const reading = readIds(res, 200);
    const stream = streamed;
    if (stream === undefined) throw new Error('the stream did not start');
    let writes = 0;
    const write = stream.write.bind(stream) as (chunk: string) => boolean;
    stream.write = ((chunk: string) => {
      writes += 1;
      return write(chunk);
    }) as typeof stream.write;
    await Promise.all(
      Array.from({ length: 200 }, (_, i) => log.append(taskId, promptId, 'text', { content: `${i}` })),
    );
    expect(await reading).toEqual(Array.from({ length: 201 }, (_, i) => i));
    expect(writes).toBeLessThanOrEqual(5);
  });
});
