import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call, startTestApi } from '../../support/api-server.js';
import type { TestApi } from '../../support/api-server.js';
import { createTask } from './tasks-support.js';

// The web pages as the API server serves them (docs/api.md#web-pages): the app shell for the page
// routes, hashed assets, security headers, and the Accept negotiation of a task's url and shareUrl.
// The pages here are a stand-in build (an index.html and one asset); test/browser uses the real one.

/** What Chromium sends when it navigates to a URL. */
const BROWSER_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const SHELL =
  '<!doctype html><html><head><script type="module" src="/ui/assets/main-abc123.js"></script></head><body><div id="app"></div></body></html>';
const ASSET = 'console.log("app");\n';

let api: TestApi;
let key: string;
let webRoot: string;

beforeAll(async () => {
  webRoot = await mkdtemp(join(tmpdir(), 'agentry-web-root-'));
  await mkdir(join(webRoot, 'assets'));
  await writeFile(join(webRoot, 'index.html'), SHELL);
  await writeFile(join(webRoot, 'assets', 'main-abc123.js'), ASSET);
  await writeFile(join(webRoot, 'secret.txt'), 'outside the assets');
  api = await startTestApi({ webRoot });
  key = await api.key();
});
afterAll(async () => {
  await api.stop();
  await rm(webRoot, { recursive: true, force: true });
});

const browse = (path: string): Promise<Response> => call(api, path, { headers: { accept: BROWSER_ACCEPT } });

/** A GET with the path sent exactly as written (fetch would normalize `..` away). */
function rawGet(path: string): Promise<number> {
  const url = new URL(api.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function expectPageSecurityHeaders(res: Response): void {
  expect(res.headers.get('content-security-policy')).toBe(
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  );
  expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('x-frame-options')).toBe('DENY');
  expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
}

describe('the app shell', () => {
  it.each(['/', '/login', '/tasks/abc', '/share/some.token', '/workspaces', '/lake'])(
    'answers a browser at %s with the shell and the security headers',
    async (path) => {
      const res = await browse(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expectPageSecurityHeaders(res);
      expect(await res.text()).toBe(SHELL);
    },
  );

  it('answers an API client at a page path as before (404 JSON)', async () => {
    const res = await call(api, '/workspaces', { headers: { accept: 'application/json' } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });

  it('answers 503 with a plain message when the pages are not built, and the JSON API still works', async () => {
    const unbuilt = await startTestApi({ webRoot: join(webRoot, 'missing') });
    try {
      const res = await call(unbuilt, '/tasks/abc', { headers: { accept: BROWSER_ACCEPT } });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await res.text()).toContain('npm run build');
      const unbuiltKey = await unbuilt.key();
      expect((await call(unbuilt, '/v1/tasks', { key: unbuiltKey })).status).toBe(200);
    } finally {
      await unbuilt.stop();
    }
  });
});

describe('assets', () => {
  it('serves a built asset cached immutable, with the security headers', async () => {
    const res = await call(api, '/ui/assets/main-abc123.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expectPageSecurityHeaders(res);
    expect(await res.text()).toBe(ASSET);
  });

  it('answers 404 for an asset that does not exist and lists no directory', async () => {
    expect((await call(api, '/ui/assets/nope.js')).status).toBe(404);
    expect((await call(api, '/ui/assets/')).status).toBe(404);
    expect((await call(api, '/ui/assets')).status).toBe(404);
  });

  it.each(['/ui/assets/../secret.txt', '/ui/assets/%2e%2e/secret.txt', '/ui/assets/..%2fsecret.txt'])(
    'refuses the path traversal %s',
    async (path) => {
      expect(await rawGet(path)).toBe(404);
    },
  );
});

describe("negotiating a task's url and shareUrl", () => {
  it('sends a browser following a task url to its page with 303', async () => {
    const created = await createTask(api, key, { prompt: 'watch me' });
    const res = await call(api, `/v1/tasks/${created.id}`, {
      redirect: 'manual',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/tasks/${created.id}`);
    expect(res.headers.get('vary')).toMatch(/Accept/);
  });

  it('sends a browser following a share link to the share page with 303', async () => {
    const res = await call(api, '/v1/share/abc.def', {
      redirect: 'manual',
      headers: { accept: BROWSER_ACCEPT },
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/share/abc.def');
  });

  it.each([
    ['*/*', '*/*'],
    ['JSON', 'application/json'],
    ['no Accept', undefined],
  ])('answers an API client sending %s with the JSON, varying by Accept', async (_name, accept) => {
    const created = await createTask(api, key, { prompt: 'json please' });
    const res = await call(api, `/v1/tasks/${created.id}`, {
      key,
      headers: accept === undefined ? {} : { accept },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('vary')).toMatch(/Accept/);
    expect(await res.json()).toMatchObject({ id: created.id });
  });

  it('answers an API client at a share link with JSON (404 for a forged one), varying by Accept', async () => {
    const res = await call(api, '/v1/share/abc.def', { headers: { accept: '*/*' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('vary')).toMatch(/Accept/);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
