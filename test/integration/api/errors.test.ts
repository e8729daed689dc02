import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { AgentComputerType } from '../../../crds/index.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

let api: TestApi;
let key: string;

beforeAll(async () => {
  api = await startTestApi();
  key = await api.key({ org: 'errors' });
});
afterAll(async () => {
  await api.stop();
});

const agentComputerCount = async (): Promise<number> =>
  (await api.store.list(AgentComputerType)).items.length;

describe('bad input gets the documented error and changes nothing (docs/api.md#errors)', () => {
  it('answers malformed JSON with 400 validation_error', async () => {
    const before = await agentComputerCount();
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: '{"name": ' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('validation_error');
    expect(await agentComputerCount()).toBe(before);
  });

  it('answers a non-JSON content type with 415 unsupported_media_type', async () => {
    const before = await agentComputerCount();
    const res = await call(api, '/v1/agent-computers', {
      key,
      method: 'POST',
      body: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_media_type');
    expect(await agentComputerCount()).toBe(before);
  });

  it('ignores unknown body fields, also nested ones, and names them in a Warning header', async () => {
    const res = await call(api, '/v1/webhooks', {
      key,
      method: 'POST',
      body: { url: 'http://127.0.0.1:9/ignored-fields', events: ['task.created'], colour: 'red' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 agentry "ignored unknown fields: colour"');
    const upload = await call(
      api,
      '/v1/workspaces/00000000-0000-4000-8000-000000000000/artifacts/upload-url',
      {
        key,
        method: 'POST',
        body: { files: [{ filename: 'a.txt', checksum: 'x' }] },
      },
    );
    expect(upload.status).toBe(404); // validated first, then looked up
    expect(upload.headers.get('warning')).toBe('299 agentry "ignored unknown fields: files.0.checksum"');
  });

  it('answers without a Warning header when every field is known', async () => {
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 'x' } });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBeNull();
  });

  it('rejects a field of the wrong type with its path', async () => {
    const res = await call(api, '/v1/agent-computers', { key, method: 'POST', body: { name: 42 } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { path: string }[] } };
    expect(body.error.details.map((detail) => detail.path)).toContain('name');
  });

  it('answers a body over 1 MiB with 413 payload_too_large', async () => {
    const before = await agentComputerCount();
    const res = await call(api, '/v1/agent-computers', {
      key,
      method: 'POST',
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    expect(await agentComputerCount()).toBe(before);
  });

  it('answers an invalid query parameter with 400 naming query.limit', async () => {
    const res = await call(api, '/v1/agent-computers?limit=1000', { key });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { details: { path: string }[] } };
    expect(body.error.details[0]?.path).toBe('query.limit');
  });

  it('answers an unknown route with 404 not_found', async () => {
    const res = await call(api, '/v1/no-such-thing', { key });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('answers under /v1/context-lake in the data-context error shape', async () => {
    const res = await call(api, '/v1/context-lake/no-such-thing', { key });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'not_found' });
  });

  it('answers auth errors under /v1/context-lake in the data-context shape too', async () => {
    const res = await call(api, '/v1/context-lake/status');
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'missing_api_key' });
  });

  it('echoes a sane x-request-id and makes one up otherwise', async () => {
    const echoed = await call(api, '/v1/agent-computers', { key, headers: { 'x-request-id': 'req-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('req-123');
    const made = await call(api, '/v1/agent-computers', {
      key,
      headers: { 'x-request-id': 'bad id\twith tab' },
    });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers JSON with charset utf-8', async () => {
    const res = await call(api, '/v1/agent-computers', { key });
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});

/** Sends raw bytes and reads the raw answer: Node refuses some requests before any fetch-able answer. */
function rawExchange(request: string): Promise<string> {
  const { port } = new URL(api.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.end(request);
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => {
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

describe('methods and transport limits answer in the documented shape', () => {
  it('answers 405 with Allow and a JSON error for a documented path with a method it lacks', async () => {
    for (const method of ['PUT', 'OPTIONS']) {
      const res = await call(api, '/v1/tasks', { key, method });
      expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'GET, HEAD, POST']);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed');
    }
  });

  it('answers TRACE (which fetch will not send) with 405 too, in the data-context shape under it', async () => {
    const answer = await rawExchange(
      `TRACE /v1/context-lake/sql HTTP/1.1\r\nHost: a\r\nAPI_KEY: ${key}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(answer).toMatch(/\r\nAllow: POST\r\n/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'method_not_allowed',
    });
  });

  it('lets the literal path win over a template: upload-url allows POST only', async () => {
    const res = await call(api, '/v1/workspaces/w/artifacts/upload-url', { key, method: 'OPTIONS' });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'POST']);
  });

  it("answers headers over Node's limit with 431 and a JSON body in the path's error shape", async () => {
    const big = 'x'.repeat(20_000);
    const task = await rawExchange(`GET /v1/tasks HTTP/1.1\r\nHost: a\r\nX-Big: ${big}\r\n\r\n`);
    expect(task).toMatch(/^HTTP\/1\.1 431 /);
    expect(task).toContain('Content-Type: application/json');
    expect(JSON.parse(task.slice(task.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'request_header_fields_too_large', message: 'The request headers are too large' },
    });
    const lake = await rawExchange(
      `GET /v1/context-lake/status HTTP/1.1\r\nHost: a\r\nX-Big: ${big}\r\n\r\n`,
    );
    expect(JSON.parse(lake.slice(lake.indexOf('\r\n\r\n') + 4))).toMatchObject({
      code: 'request_header_fields_too_large',
    });
  });

  it('documents a request body as required only where an empty one is refused', async () => {
    const doc = (await (await call(api, '/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { requestBody?: { required: boolean } }>>;
    };
    expect(doc.paths['/v1/agent-computers']?.post?.requestBody?.required).toBe(false);
    expect(doc.paths['/v1/tasks']?.post?.requestBody?.required).toBe(true);
  });
});
