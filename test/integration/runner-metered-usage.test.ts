// The runner's `result` event carries the model gateway's figures (`metered`) next to the CLI's own
// `usage`: a runner on loopback with the real shell executor, and a tiny HTTP server standing in
// for the gateway's GET /model-gateway/usage (the gateway itself is tested in its own files).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TaskEvent } from '../../platform/runner-protocol.js';
import { startRunner } from './runner-tasks-support.js';
import type { TestRunner } from './runner-tasks-support.js';

const PROMPT_USAGE = { requests: 2, inputTokens: 1500, outputTokens: 200, costUsd: 0.0123 };
const TOKEN = 'agp1.claims.mac';

interface Seen {
  path: string | undefined;
  authorization: string | undefined;
}

/** Stands in for the model gateway's usage endpoint; `answer` decides each reply. */
class StandInUsageEndpoint {
  readonly seen: Seen[] = [];
  answer: (res: ServerResponse) => void = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ prompt: PROMPT_USAGE, task: { ...PROMPT_USAGE, requests: 5 } }));
  };
  private readonly server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    this.seen.push({ path: req.url, authorization: req.headers.authorization });
    this.answer(res);
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => {
      this.server.listen(0, '127.0.0.1', resolve);
    });
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
  }
}

let runner: TestRunner;
let gateway: StandInUsageEndpoint;
let gatewayUrl: string;

beforeAll(async () => {
  runner = await startRunner({ meteredUsageTimeoutMs: 1_000 });
  gateway = new StandInUsageEndpoint();
  gatewayUrl = await gateway.start();
});

afterAll(async () => {
  await runner.app.shutdown();
  await runner.http.stop();
  await rm(runner.root, { recursive: true, force: true });
  await gateway.stop();
});

async function resultOf(extra: Record<string, unknown>): Promise<TaskEvent | undefined> {
  const [taskId, promptId] = [randomUUID(), randomUUID()];
  await runner.client.run(taskId, promptId, 'echo done\n', extra);
  expect((await runner.client.waitForTerminal(taskId, promptId)).status).toBe('succeeded');
  const { events } = await runner.client.events(taskId, `?promptId=${promptId}`);
  return events.find((event) => event.eventType === 'result');
}

describe("the result event's metered usage", () => {
  it("carries what the gateway counted for the prompt, asked with the prompt's token", async () => {
    gateway.seen.length = 0;
    const result = await resultOf({ modelGateway: { url: gatewayUrl, token: TOKEN } });
    expect(result?.payload).toEqual({ result: 'done', metered: PROMPT_USAGE });
    expect(gateway.seen).toEqual([{ path: '/model-gateway/usage', authorization: `Bearer ${TOKEN}` }]);
  });

  it('is left out, and the gateway never asked, for a prompt without the gateway', async () => {
    gateway.seen.length = 0;
    const result = await resultOf({});
    expect(result?.payload).toEqual({ result: 'done' });
    expect(gateway.seen).toEqual([]);
  });

  it('is left out when the gateway counted nothing for the prompt', async () => {
    gateway.answer = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"prompt":null,"task":null}');
    };
    expect((await resultOf({ modelGateway: { url: gatewayUrl, token: TOKEN } }))?.payload).toEqual({
      result: 'done',
    });
  });

  it('is left out when the gateway fails, and the prompt still succeeds with its result', async () => {
    gateway.answer = (res) => {
      res.writeHead(500).end('boom');
    };
    expect((await resultOf({ modelGateway: { url: gatewayUrl, token: TOKEN } }))?.payload).toEqual({
      result: 'done',
    });
  });

  it('is left out when the gateway does not answer within the time limit', async () => {
    gateway.answer = () => undefined; // never answers; the runner gives up after 1 s
    expect((await resultOf({ modelGateway: { url: gatewayUrl, token: TOKEN } }))?.payload).toEqual({
      result: 'done',
    });
  });
});
