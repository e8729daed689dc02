// The dispatch table in front of the API's routes (api/route-table.ts) must send every request
// where Express's own routing sends it: the same route, the same decoded parameters, and what it
// does not take left to Express. Two loopback servers over the same templates, one with the table
// in front, answer which route ran; the requests are the edge cases of Express's matching.
import { createServer, request } from 'node:http';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { closeServer, listenOnLoopback } from '../../bench/support/http.js';
import { RouteTable } from '../../api/route-table.js';

type Method = 'get' | 'post' | 'patch' | 'delete';

/** The API's shapes: literals and whole-segment parameters, a literal before a parameter it shadows. */
const ROUTES: readonly (readonly [Method, string])[] = [
  ['post', '/v1/tasks'],
  ['get', '/v1/tasks'],
  ['get', '/v1/tasks/:id'],
  ['post', '/v1/tasks/:id/cancel'],
  ['delete', '/v1/tasks/:id'],
  ['get', '/v1/tasks/:id/prompts/:promptId/events'],
  ['get', '/v1/webhooks/public_key'],
  ['get', '/v1/webhooks/:id'],
  ['get', '/v1/workspaces/:id/artifacts/:filename'],
  ['patch', '/v1/context-lake/config'],
  // A template the table does not understand: it and every route after it stay Express's alone.
  ['get', '/v1/files/*rest'],
  ['get', '/v1/files/:id'],
];

interface Answer {
  status: number;
  body: string;
}

function app(withTable: boolean): express.Express {
  const application = express();
  const router = express.Router();
  const table = new RouteTable();
  if (withTable) router.use(table.dispatch);
  for (const [method, template] of ROUTES) {
    const answer =
      (via: string) =>
      (req: Request, res: Response): undefined => {
        res.json({ template, params: req.params, via, route: (req.route as { path: string }).path });
        return undefined;
      };
    const route = router.route(template);
    route[method](answer('express'));
    table.add(method, template, route, answer('table'));
  }
  application.use(router);
  application.use((err: { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    res.status(err.status ?? 500).json({ error: true });
  });
  return application;
}

let servers: Server[] = [];
let plainPort = 0;
let tablePort = 0;

beforeAll(async () => {
  servers = [createServer(app(false)), createServer(app(true))];
  const [plain, table] = servers;
  if (plain === undefined || table === undefined) throw new Error('no servers');
  plainPort = await listenOnLoopback(plain);
  tablePort = await listenOnLoopback(table);
});
afterAll(async () => {
  await Promise.all(servers.map((server) => closeServer(server)));
});

/** One request with the path exactly as written (no normalization, unlike fetch). */
const send = (port: number, method: string, path: string): Promise<Answer> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.once('error', reject);
    req.end();
  });

/** Both servers' answers, with which of them dispatched it left out. */
async function both(method: string, path: string): Promise<{ plain: Answer; table: Answer; via: string }> {
  const [plain, table] = await Promise.all([send(plainPort, method, path), send(tablePort, method, path)]);
  const via = /"via":"(\w+)"/.exec(table.body)?.[1] ?? 'none';
  const strip = (answer: Answer): Answer => ({ ...answer, body: answer.body.replace(/"via":"\w+",?/, '') });
  return { plain: strip(plain), table: strip(table), via };
}

describe('RouteTable', () => {
  it.each([
    ['GET', '/v1/tasks/abc'],
    ['GET', '/v1/tasks'],
    ['GET', '/v1/tasks?limit=20'],
    ['HEAD', '/v1/tasks/abc'],
    ['POST', '/v1/tasks/abc/cancel'],
    ['DELETE', '/v1/tasks/abc'],
    ['GET', '/v1/tasks/abc/prompts/p1/events'],
    ['GET', '/V1/Tasks/abc'],
    ['GET', '/v1/tasks/abc/'],
    ['GET', '/v1/tasks/a%20b%2Fc'],
    ['GET', '/v1/webhooks/public_key'],
    ['GET', '/v1/webhooks/PUBLIC_KEY'],
    ['GET', '/v1/webhooks/w1'],
    ['GET', '/v1/workspaces/w/artifacts/report%2Fq1.csv'],
    ['PATCH', '/v1/context-lake/config'],
  ])('takes %s %s to the route Express picks, with the same parameters', async (method, path) => {
    const { plain, table, via } = await both(method, path);
    expect(table).toEqual(plain);
    expect(plain.status).toBe(200);
    if (method !== 'HEAD') expect(via).toBe('table');
  });

  it.each([
    ['GET', '/v1/tasks/abc//'],
    ['GET', '/v1/tasks//'],
    ['GET', '/v1//tasks'],
    ['GET', '/v1/tasks/%E0%A4%A'],
    ['PUT', '/v1/tasks'],
    ['OPTIONS', '/v1/tasks'],
    ['POST', '/v1/tasks/abc'],
    ['GET', '/v1/files/a/b'],
    ['GET', '/v1/files/abc'],
    ['GET', '/elsewhere'],
  ])('leaves %s %s to Express, which answers as it would without the table', async (method, path) => {
    const { plain, table, via } = await both(method, path);
    expect(table).toEqual(plain);
    if (method !== 'HEAD') expect(via).not.toBe('table');
  });
});
