// The request log (api/middleware/request-log.ts): one JSON line per request, the caller named by
// organization and key id, never by the key.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

const RequestLineSchema = z.object({
  level: z.string(),
  msg: z.string(),
  req: z.object({ id: z.string(), method: z.string(), url: z.string() }).strict(),
  res: z.object({ statusCode: z.number() }).strict(),
  responseTime: z.number(),
  org: z.string().optional(),
  keyId: z.string().optional(),
});

let api: TestApi;
let key: string;
const lines: string[] = [];

beforeAll(async () => {
  api = await startTestApi({ logDestination: { write: (line) => lines.push(line) }, logLevel: 'info' });
  key = await api.key({ org: 'acme', user: 'alice' });
});
afterAll(() => api.stop());

/** The request lines of the request with this x-request-id, once it was logged. */
async function linesOf(requestId: string): Promise<z.infer<typeof RequestLineSchema>[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const mine = lines.filter((line) => line.includes(`"id":"${requestId}"`) && line.includes('"res"'));
    if (mine.length > 0 || Date.now() > deadline)
      return mine.map((line) => RequestLineSchema.parse(JSON.parse(line)));
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the request log', () => {
  it('logs one line per request with its id, method, url, status and caller, without the key', async () => {
    await (await call(api, '/v1/tasks?limit=1', { key, headers: { 'x-request-id': 'log-ok' } })).text();

    const logged = await linesOf('log-ok');

    expect(logged).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'request completed',
        req: { id: 'log-ok', method: 'GET', url: '/v1/tasks?limit=1' },
        res: { statusCode: 200 },
        org: 'acme',
        keyId: expect.stringMatching(/^[0-9a-f]{16}$/),
      }),
    ]);
    expect(lines.join('')).not.toContain(key);
  });

  it('logs a client error at warn level', async () => {
    await (await call(api, '/v1/tasks/missing', { key, headers: { 'x-request-id': 'log-404' } })).text();

    const logged = await linesOf('log-404');

    expect(logged.map((line) => [line.level, line.res.statusCode])).toEqual([['warn', 404]]);
  });

  it('logs a share link without its token', async () => {
    const token = 'not-a-real-share-token-0123456789';
    await (await call(api, `/v1/share/${token}`, { headers: { 'x-request-id': 'log-share' } })).text();

    const logged = await linesOf('log-share');

    expect(logged.map((line) => line.req.url)).toEqual(['/v1/share/[redacted]']);
    expect(lines.join('')).not.toContain(token);
  });
});
