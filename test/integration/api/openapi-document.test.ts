// The OpenAPI document against the server and a linter: every route the app mounts is a path of the
// document and nothing else is, and Redocly's CLI (recommended rules) finds no problem in it.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MODEL_GATEWAY_PATH } from '../../../platform/model-gateway/providers.js';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { templatePath } from '../../../api/openapi/document.js';
import { STORAGE_PATH } from '../../../platform/objectstore/filesystem.js';
import { SESSION_PATH } from '../../../api/web/session-routes.js';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';

const REDOCLY = resolve('node_modules/.bin/redocly');

const DocumentSchema = z.object({
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
  components: z.object({ schemas: z.record(z.string(), z.unknown()) }),
});

/** A layer of Express's router (router 2.x): a route, a mounted router, or middleware at a path. */
const LayerSchema = z.object({
  rawPath: z.unknown(),
  route: z.object({ path: z.string(), methods: z.record(z.string(), z.boolean()) }).optional(),
  handle: z.unknown(),
});

/** The layers of a router (a function with a `stack`), or undefined for a plain handler. */
const layersOf = (router: unknown): z.infer<typeof LayerSchema>[] | undefined =>
  (typeof router === 'function' || typeof router === 'object') && router !== null && 'stack' in router
    ? z.array(LayerSchema).parse(router.stack)
    : undefined;

/** `method path` of every route mounted on the router, through the routers mounted on it; middleware paths apart. */
function mounted(router: unknown): { routes: string[]; middlewarePaths: string[] } {
  const routes: string[] = [];
  const middlewarePaths: string[] = [];
  for (const layer of layersOf(router) ?? []) {
    if (layer.route !== undefined) {
      const path = templatePath(layer.route.path);
      for (const method of Object.keys(layer.route.methods)) routes.push(`${method} ${path}`);
      continue;
    }
    if (layersOf(layer.handle) !== undefined) {
      const nested = mounted(layer.handle);
      routes.push(...nested.routes);
      middlewarePaths.push(...nested.middlewarePaths);
    } else if (typeof layer.rawPath === 'string' && layer.rawPath !== '/') {
      middlewarePaths.push(layer.rawPath);
    }
  }
  return { routes, middlewarePaths };
}

/** `method path` of every operation of the document. */
const documented = (paths: Record<string, Record<string, unknown>>): string[] =>
  Object.entries(paths).flatMap(([path, operations]) => Object.keys(operations).map((m) => `${m} ${path}`));

let api: TestApi;
/** What `redocly lint --format=json` reports. */
const LintReportSchema = z.object({
  totals: z.object({ errors: z.number(), warnings: z.number(), ignored: z.number() }),
  problems: z.array(z.object({ ruleId: z.string(), message: z.string(), location: z.unknown() })),
});

let raw: unknown;
let document: z.infer<typeof DocumentSchema>;
let dir: string;

beforeAll(async () => {
  api = await startTestApi();
  raw = await (await call(api, '/v1/openapi.json')).json();
  document = DocumentSchema.parse(raw);
  dir = await mkdtemp(join(tmpdir(), 'agentry-openapi-lint-'));
});
afterAll(async () => {
  await api.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('the OpenAPI document', () => {
  it('has a path for every route the app mounts, and no operation the app does not answer', () => {
    const { routes, middlewarePaths } = mounted(api.app.router);
    // The signed storage URLs are served by middleware mounted at their prefix (their body must reach it unread).
    const storage = documented(document.paths).filter((op) => op.includes(` ${STORAGE_PATH}`));
    expect(storage.sort()).toEqual(['get /v1/storage/{key}', 'put /v1/storage/{key}']);
    expect(middlewarePaths).toContain(STORAGE_PATH);
    // The web pages' session is not part of the JSON API (docs/api.md#web-pages), nor is the model
    // gateway, which agents call with a prompt token (docs/model-gateway.md).
    const gateway = `${MODEL_GATEWAY_PATH}/*path`;
    expect(routes).toContain(`post ${gateway}`);
    const apiRoutes = routes.filter(
      (route) => !route.endsWith(` ${SESSION_PATH}`) && !route.endsWith(` ${gateway}`),
    );
    expect(
      documented(document.paths)
        .filter((op) => !storage.includes(op))
        .sort(),
    ).toEqual([...new Set(apiRoutes)].sort());
  });

  it('names the resources of the API as components', () => {
    const names = Object.keys(document.components.schemas);
    for (const name of ['Task', 'AgentComputer', 'Webhook', 'Artifact', 'TaskEvent', 'Error', 'LakeError'])
      expect(names).toContain(name);
    for (const name of ['Dataset', 'View', 'LakeConfig', 'LakeStatus', 'TaskStreamFrame'])
      expect(names).toContain(name);
  });

  it('has no problem under Redocly CLI lint (recommended rules)', async () => {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(raw));
    const report = await new Promise<string>((done, fail) => {
      execFile(
        REDOCLY,
        ['lint', file, '--extends=recommended', '--format=json'],
        {
          cwd: dir,
          timeout: 60_000,
          maxBuffer: 16 * 1024 * 1024,
          // No telemetry, no update check, no announcements: the linter reaches nothing beyond this machine.
          env: {
            PATH: process.env.PATH ?? '',
            HOME: dir,
            CI: 'true',
            REDOCLY_TELEMETRY: 'off',
            REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
            REDOCLY_SUPPRESS_NOTIFICATIONS: 'true',
          },
        },
        // It exits 1 on errors: the report says which.
        (err, stdout, stderr) => {
          if (stdout.trim().startsWith('{')) done(stdout);
          else fail(new Error(`redocly lint printed no report: ${err?.message ?? ''} ${stderr}`));
        },
      );
    });
    const { totals, problems } = LintReportSchema.parse(JSON.parse(report));
    // Warnings count too; on failure the problems are the message.
    expect({ totals, problems: totals.errors + totals.warnings === 0 ? [] : problems }).toEqual({
      totals: { errors: 0, warnings: 0, ignored: 0 },
      problems: [],
    });
  }, 90_000);
});
