// The cached reads (GET /v1/tasks/:id and the list) are answered without Express's layer stack
// (api/direct-reads.ts). These send the same requests to the API as served and to its Express app
// alone, and require the same answers: status, the headers that matter and the body, for 200,
// 304, HEAD, 400, 401, 403, 404 and a browser's 303.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import { AgentComputerType, TaskSpecSchema, TaskType, apiVersionOf } from '../../../crds/index.js';
import { JsonText } from '../../../api/json-text.js';
import { eventually, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { agentComputerObject } from '../../support/workspace-objects.js';
import express from 'express';

const NAMESPACE = 'agentry-org-acme';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Headers that differ between any two answers (the clock, a random request id, the connection). */
const UNCOMPARED = new Set(['date', 'x-request-id', 'connection', 'keep-alive']);

function send(base: string, method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const kept = Object.entries(res.headers).filter(([name]) => !UNCOMPARED.has(name));
        expect(res.headers['x-request-id']).toBeDefined();
        resolve({
          status: res.statusCode ?? 0,
          headers: Object.fromEntries(kept),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.once('error', reject);
    req.end();
  });
}

let api: TestApi;
let expressOnly: Server;
let expressUrl: string;
let key: string;
let readOnlyFiles: string;
let taskId: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key();
  readOnlyFiles = await api.key({ scopes: ['agent-computers:read'] });
  const workspace = randomUUID();
  await api.store.create(AgentComputerType, agentComputerObject(NAMESPACE, workspace));
  const task = await api.store.create(TaskType, {
    apiVersion: apiVersionOf(TaskType),
    kind: TaskType.kind,
    metadata: { name: randomUUID(), namespace: NAMESPACE },
    spec: TaskSpecSchema.parse({
      workspace,
      executor: 'shell',
      title: 'make the tests pass',
      owner: 'alice',
      prompts: [{ id: randomUUID(), text: 'make the tests pass', submittedAt: '2026-01-01T00:00:00Z' }],
    }),
  });
  taskId = task.metadata.name;
  await eventually(() => api.readModel.tasks.get(NAMESPACE, taskId) !== undefined);
  expressOnly = createServer(api.app);
  await new Promise<void>((resolve) => expressOnly.listen(0, '127.0.0.1', resolve));
  const address = expressOnly.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  expressUrl = `http://127.0.0.1:${String(address.port)}`;
});

afterAll(async () => {
  expressOnly.closeAllConnections();
  await new Promise((resolve) => expressOnly.close(resolve));
  await api.stop();
});

/** The answer of the API as served, after checking Express alone answers the same. */
async function sameAnswer(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const direct = await send(api.url, method, path, headers);
  const viaExpress = await send(expressUrl, method, path, headers);
  expect(direct).toEqual(viaExpress);
  return direct;
}

describe('reads answered without Express', () => {
  it('answer a task as Express does, with its ETag', async () => {
    const answer = await sameAnswer('GET', `/v1/tasks/${taskId}`, { API_KEY: key });
    expect(answer.status).toBe(200);
    expect(answer.headers.vary).toBe('Accept');
  });

  it('answer 304 to the ETag they gave, as Express does', async () => {
    const { headers } = await send(api.url, 'GET', `/v1/tasks/${taskId}`, { API_KEY: key });
    const etag = String(headers.etag);
    const answer = await sameAnswer('GET', `/v1/tasks/${taskId}`, { API_KEY: key, 'If-None-Match': etag });
    expect(answer.status).toBe(304);
  });

  it('answer HEAD with the headers of the GET and no body, as Express does', async () => {
    const answer = await sameAnswer('HEAD', `/v1/tasks/${taskId}`, { API_KEY: key });
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: '' });
  });

  it('answer a page of tasks as Express does', async () => {
    const answer = await sameAnswer('GET', '/v1/tasks?limit=2', { API_KEY: key });
    expect(answer.status).toBe(200);
  });

  it('answer an invalid query 400 as Express does', async () => {
    const answer = await sameAnswer('GET', '/v1/tasks?limit=many', { API_KEY: key });
    expect(answer.status).toBe(400);
  });

  it('answer a request without a key 401 as Express does', async () => {
    const answer = await sameAnswer('GET', `/v1/tasks/${taskId}`, {});
    expect(answer.status).toBe(401);
  });

  it('answer a key without the scope 403 as Express does', async () => {
    const answer = await sameAnswer('GET', `/v1/tasks/${taskId}`, { API_KEY: readOnlyFiles });
    expect(answer.status).toBe(403);
  });

  it('answer an unknown task 404 as Express does', async () => {
    const answer = await sameAnswer('GET', `/v1/tasks/${randomUUID()}`, { API_KEY: key });
    expect(answer.status).toBe(404);
  });

  it("leave a browser's request to the page negotiation (303)", async () => {
    const answer = await sameAnswer('GET', `/v1/tasks/${taskId}`, { API_KEY: key, Accept: 'text/html' });
    expect(answer.status).toBe(303);
  });
});

describe("a cached answer's ETag", () => {
  it('is the one Express computes of the same text', () => {
    const text = JSON.stringify({ id: randomUUID(), prompts: ['é', 'x'.repeat(2_000)] });
    // The app setting Express's res.send hashes a body with (its default, `etag: 'weak'`).
    const expressEtag = express().get('etag fn') as (body: string, encoding: string) => string;
    expect(new JsonText(text).etag).toBe(expressEtag(text, 'utf8'));
  });
});
