import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import { createServer } from 'node:http';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { errorHandler } from '../../../api/middleware/errors.js';
import { requestLog } from '../../../api/middleware/request-log.js';
import { createLogger } from '../../../platform/log.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key({ org: 'ops' });
});
afterAll(async () => {
  await api.stop();
});

describe('operational endpoints', () => {
  it('answers /healthz and /readyz without a key', async () => {
    expect((await call(api, '/healthz')).status).toBe(200);
    expect(await (await call(api, '/readyz')).json()).toEqual({ status: 'ready' });
  });

  it('answers /health, where hosted-service clients probe, like /healthz', async () => {
    const res = await call(api, '/health');
    expect(res.status).toBe(200);
    expect(z.object({ status: z.literal('ok') }).parse(await res.json())).toEqual({ status: 'ok' });
  });

  it('serves an OpenAPI 3.1 document generated from the route schemas', async () => {
    const doc = z
      .object({
        openapi: z.literal('3.1.0'),
        paths: z.record(z.string(), z.record(z.string(), z.object({ operationId: z.string() }))),
      })
      .parse(await (await call(api, '/v1/openapi.json')).json());
    expect(doc.paths['/v1/agent-computers']?.get?.operationId).toBe('listAgentComputers');
    expect(doc.paths['/v1/agent-computers']?.post?.operationId).toBe('createAgentComputer');
    expect(doc.paths['/v1/agent-computers/{id}']?.get?.operationId).toBe('getAgentComputer');
  });

  it('describes the request body schema, unknown fields accepted (they are ignored)', async () => {
    const doc = (await (await call(api, '/v1/openapi.json')).json()) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.paths['/v1/agent-computers']?.post?.requestBody?.content['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/CreateAgentComputerRequest',
    });
    const schema = doc.components.schemas.CreateAgentComputerRequest;
    expect(schema).toMatchObject({
      type: 'object',
      properties: { name: { type: 'string' } },
    });
    expect(schema).not.toHaveProperty('additionalProperties');
  });

  it('counts requests in /metrics by route template, never by URL', async () => {
    await call(api, '/v1/agent-computers/3f0e0b52-9a43-4a55-9d0f-0a5b8f7c1e11', { key });
    const text = await (await call(api, '/metrics')).text();
    expect(text).toMatch(
      /agentry_http_request_duration_seconds_count\{method="GET",route="\/v1\/agent-computers\/:id",status="404"\} 1/,
    );
    expect(text).not.toContain('3f0e0b52');
  });
});

describe('unexpected failures', () => {
  it('answer 500 internal_error without the cause, and log the cause with the request id', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = express();
    app.use(requestLog({ logger: createLogger({ level: 'info' }, sink) }));
    app.get('/v1/boom', () => {
      throw new Error('database password is hunter2');
    });
    app.use(errorHandler());
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      const res = await fetch(`http://127.0.0.1:${address.port}/v1/boom`, {
        headers: { 'x-request-id': 'boom-1' },
      });
      expect(res.status).toBe(500);
      const body = await res.text();
      expect(JSON.parse(body)).toEqual({
        error: { code: 'internal_error', message: 'Internal server error' },
      });
      expect(body).not.toContain('hunter2');
      expect(lines.join('')).toContain('hunter2');
      expect(lines.some((line) => line.includes('"boom-1"') && line.includes('request failed'))).toBe(true);
    } finally {
      server.close();
    }
  });

  it('never logs the API key header', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = express();
    app.use(requestLog({ logger: createLogger({ level: 'info' }, sink) }));
    app.get('/x', (_req, res) => {
      res.json({});
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      await fetch(`http://127.0.0.1:${address.port}/x`, { headers: { API_KEY: 'agk_supersecret' } });
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.join('')).not.toContain('agk_supersecret');
    } finally {
      server.close();
    }
  });
});
