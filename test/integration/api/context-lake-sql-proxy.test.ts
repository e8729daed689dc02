// How the API proxies to the lake server the parts of the protocol that ADR 0010 added (waitFor,
// dataAsOf, refresh modes, busy and not_applied), as a unit of the proxying: the lake here is a
// loopback HTTP server that speaks the protocol (platform/lake-protocol.ts) and records what it
// was asked. The real lake server's side is tested with the lake (test/integration/lake-*).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { lake, lakeError, readyCondition, s3Dataset, writeLakeStatus } from './context-lake-support.js';

const ORG = 'proxyco';
/** The API's own bound; a waitFor wait comes on top of it. */
const SQL_TIMEOUT_MS = 400;

interface Answer {
  status: number;
  body: unknown;
  delayMs?: number;
}

/** The lake stand-in: answers the next scripted answer of a path (or a default) and records requests. */
class ProtocolLake {
  readonly requests: { path: string; body: unknown }[] = [];
  readonly script = new Map<string, Answer[]>();
  private readonly server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      this.requests.push({ path, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') });
      const answer = this.script.get(path)?.shift() ?? {
        status: 404,
        body: { error: { code: 'not_found', message: path } },
      };
      setTimeout(() => {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      }, answer.delayMs ?? 0);
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  answer(path: string, ...answers: Answer[]): void {
    this.script.set(path, answers);
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) =>
      this.server.close(() => {
        resolve();
      }),
    );
  }
}

const fakeLake = new ProtocolLake();
let api: TestApi;
let key: string;

const ROWS = {
  rows: [{ n: 1 }],
  columns: [{ name: 'n', type: 'INTEGER' }],
  rowCount: 1,
  truncated: false,
  elapsedMs: 3,
};

beforeAll(async () => {
  const endpoint = await fakeLake.start();
  api = await startTestApi({ lakeSqlTimeoutMs: SQL_TIMEOUT_MS });
  key = await api.key({ org: ORG, user: 'pia' });
  expect((await lake(api, key, 'POST', '/datasets', s3Dataset('orders'))).status).toBe(201);
  expect((await lake(api, key, 'POST', '/start')).status).toBe(202);
  await writeLakeStatus(api, ORG, (current) => ({
    vmStatus: 'running',
    endpoint,
    conditions: [readyCondition(current)],
  }));
});
afterAll(async () => {
  await api.stop();
  await fakeLake.stop();
});
beforeEach(() => {
  fakeLake.requests.length = 0;
});

describe('POST /sql through the API', () => {
  it('sends an existing client’s { query } as before, with nothing added but the answer limit', async () => {
    fakeLake.answer('/v1/sql', { status: 200, body: ROWS });
    expect((await lake(api, key, 'POST', '/sql', { query: 'SELECT 1 AS n' })).status).toBe(200);
    expect(fakeLake.requests).toEqual([
      { path: '/v1/sql', body: { query: 'SELECT 1 AS n', maxResultBytes: expect.any(Number) } },
    ]);
  });

  it('passes waitFor and waitTimeoutMs to the lake and answers the dataAsOf of each dataset read', async () => {
    const dataAsOf = { orders: '2026-11-26T02:00:00.000Z' };
    fakeLake.answer('/v1/sql', { status: 200, body: { ...ROWS, dataAsOf } });
    const waitFor = [{ bucket: 'agentry-test-bucket', key: 'orders/new.parquet', etag: '"abc"' }];
    const answer = await lake(api, key, 'POST', '/sql', {
      query: 'SELECT 1 AS n',
      waitFor,
      waitTimeoutMs: 5000,
    });
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ rows: [{ n: 1 }], dataAsOf });
    expect(fakeLake.requests[0]?.body).toMatchObject({
      query: 'SELECT 1 AS n',
      waitFor,
      waitTimeoutMs: 5000,
    });
  });

  it('waits past its own bound for as long as the query asked to wait for its objects', async () => {
    fakeLake.answer('/v1/sql', { status: 200, body: ROWS, delayMs: SQL_TIMEOUT_MS + 400 });
    const answer = await lake(api, key, 'POST', '/sql', {
      query: 'SELECT 1 AS n',
      waitFor: [{ key: 'orders/new.parquet' }],
      waitTimeoutMs: 3000,
    });
    expect(answer.status).toBe(200);
  });

  it('answers 504 not_applied with the lake’s reason when an object was not applied in time', async () => {
    fakeLake.answer('/v1/sql', {
      status: 504,
      body: { error: { code: 'not_applied', message: 'orders/new.parquet: no such object in the source' } },
    });
    const body = await lakeError(
      lake(api, key, 'POST', '/sql', { query: 'SELECT 1', waitFor: [{ key: 'orders/new.parquet' }] }),
      504,
      'not_applied',
    );
    expect(body.error).toContain('orders/new.parquet: no such object in the source');
  });

  it('answers 429 busy at once when the lake’s queue is full, without asking again', async () => {
    fakeLake.answer('/v1/sql', {
      status: 429,
      body: { error: { code: 'busy', message: 'the lake runs 2 queries at once and 8 wait already' } },
    });
    const body = await lakeError(lake(api, key, 'POST', '/sql', { query: 'SELECT 1' }), 429, 'busy');
    expect(body.error).toContain('retry in a moment');
    expect(fakeLake.requests).toHaveLength(1);
  });

  it('refuses a waitTimeoutMs beyond 60 s with 400 validation_error, asking the lake nothing', async () => {
    await lakeError(
      lake(api, key, 'POST', '/sql', { query: 'SELECT 1', waitFor: [{ key: 'a' }], waitTimeoutMs: 60_001 }),
      400,
      'validation_error',
    );
    expect(fakeLake.requests).toHaveLength(0);
  });
});

describe('POST /datasets/:name/refresh through the API', () => {
  it('asks the lake to refresh the dataset in auto mode by default and answers 202 with what it accepted', async () => {
    fakeLake.answer('/v1/refresh', { status: 202, body: { accepted: ['orders'] } });
    const answer = await lake(api, key, 'POST', '/datasets/orders/refresh');
    expect({ status: answer.status, json: answer.json }).toEqual({
      status: 202,
      json: { ok: true, accepted: ['orders'], mode: 'auto' },
    });
    expect(fakeLake.requests).toEqual([
      { path: '/v1/refresh', body: { datasets: ['orders'], mode: 'auto' } },
    ]);
  });

  it('passes mode full on', async () => {
    fakeLake.answer('/v1/refresh', { status: 202, body: { accepted: ['orders'] } });
    const answer = await lake(api, key, 'POST', '/datasets/orders/refresh', { mode: 'full' });
    expect(answer.json).toEqual({ ok: true, accepted: ['orders'], mode: 'full' });
    expect(fakeLake.requests[0]?.body).toEqual({ datasets: ['orders'], mode: 'full' });
  });
});
