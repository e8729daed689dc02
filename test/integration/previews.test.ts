import { randomUUID } from 'node:crypto';
// Preview URLs (docs/api.md#previews) on the embedded default: the real operator runs the
// workspace as a confined process, a shell prompt starts a dev server in it, and the API proxies.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { AgentComputerType } from '../../crds/index.js';
import { PreviewTokens } from '../../api/agent-computer/previews/token.js';
import { updateWithRetry } from '../../api/optimistic-update.js';
import { call, eventually } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';
import { readTaskStream } from '../support/sse.js';
import { websocketRoundTrip } from '../support/websocket-client.js';

const NAMESPACE = 'agentry-org-acme';
const DOMAIN = 'preview.agentry.test';
let stack: EmbeddedStack;
let api: TestApi;
let key: string;
let workspaceId: string;
let devPort: number;

interface Preview {
  id: string;
  port: number;
  url: string;
  expiresAt: string;
  createdAt: string;
}

/** A port free on loopback now (the dev server takes it a moment later). */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        done(typeof address === 'object' && address !== null ? address.port : 0);
      });
    });
  });
}

/** A shell prompt that starts the dev server in the background, outliving the prompt (setsid). */
const startDevServerPrompt = (port: number): string =>
  [
    `cp ${join(resolve('.'), 'test/integration/previews-dev-server.mjs')} server.mjs`,
    `setsid node server.mjs ${port} ${join(resolve('.'), 'node_modules/ws')} > server.log 2>&1 < /dev/null &`,
    'for i in $(seq 100); do grep -q listening server.log && break; sleep 0.1; done',
    'cat server.log',
  ].join('\n');

async function createPreview(port: number, as = key): Promise<Response> {
  return call(api, `/v1/agent-computers/${workspaceId}/previews`, {
    key: as,
    method: 'POST',
    body: { port },
  });
}

async function newPreview(port = devPort): Promise<Preview> {
  const res = await createPreview(port);
  expect(res.status).toBe(201);
  return (await res.json()) as Preview;
}

/** The token of a host-mode URL (`http://<token>.<domain>/`). */
const tokenOf = (preview: Preview): string => new URL(preview.url).hostname.split('.')[0] ?? '';
const pathUrl = (preview: Preview, path = '/'): string => `${api.url}/previews/${tokenOf(preview)}${path}`;

async function workspaceStatus(): Promise<string> {
  const res = await call(api, `/v1/agent-computers/${workspaceId}`, { key });
  return ((await res.json()) as { status: string }).status;
}

beforeAll(async () => {
  stack = await startEmbeddedStack({ prefix: 'agentry-previews-', previews: { previewDomain: DOMAIN } });
  api = stack.api;
  key = await api.key({ org: 'acme' });
  devPort = await freePort();
  const res = await call(api, '/v1/tasks', {
    key,
    method: 'POST',
    body: { executor: 'shell', prompt: startDevServerPrompt(devPort) },
  });
  const task = (await res.json()) as { id: string; workspaceId: string };
  workspaceId = task.workspaceId;
  const stream = await readTaskStream(`${api.url}/v1/tasks/${task.id}/events`, { key, timeoutMs: 90_000 });
  expect(stream.done?.status).toBe('completed');
  // Made for the task: it would hibernate once the task is idle; this workspace stays up.
  await updateWithRetry(api.store, AgentComputerType, NAMESPACE, workspaceId, (ac) => ({
    ...ac,
    spec: { ...ac.spec, ephemeral: false },
  }));
}, 120_000);

afterAll(async () => {
  await stack.stop();
}, 90_000);

describe('preview URLs', () => {
  it('answers 201 with a signed URL on its own host, listed until revoked', async () => {
    const preview = await newPreview();
    expect(preview.url).toMatch(new RegExp(`^http://[a-z2-7]{56}\\.${DOMAIN.replaceAll('.', '\\.')}/$`));
    const list = await call(api, `/v1/agent-computers/${workspaceId}/previews`, { key });
    const { data } = (await list.json()) as { data: Preview[] };
    expect(data.map((p) => p.id)).toContain(preview.id);
  });

  it('proxies a GET to the dev server, the path after the token included', async () => {
    const res = await fetch(pathUrl(await newPreview(), '/some/page?x=1'));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello from the dev server at /some/page?x=1');
  });

  it('proxies a POST body', async () => {
    const res = await fetch(pathUrl(await newPreview(), '/echo'), { method: 'POST', body: 'a body' });
    expect(await res.text()).toBe('echo:a body');
  });

  it('keeps the API key and session cookie from the workspace, and says where the request came from', async () => {
    const res = await fetch(pathUrl(await newPreview(), '/headers'), {
      headers: { API_KEY: key, authorization: `Bearer ${key}`, cookie: 'agentry_session=secret; theme=dark' },
    });
    const { headers } = (await res.json()) as { headers: Record<string, string> };
    expect(headers.api_key).toBeUndefined();
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBe('theme=dark');
    expect(headers['x-forwarded-prefix']).toMatch(/^\/previews\/[a-z2-7]{56}$/);
    expect(headers['x-forwarded-proto']).toBe('http');
  });

  it("sandboxes path-mode pages and drops their cookies (they would land on the API's origin)", async () => {
    const res = await fetch(pathUrl(await newPreview()));
    expect(res.headers.get('content-security-policy')).toMatch(/^sandbox allow-scripts/);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('redirects the bare token path to the path with a slash', async () => {
    const preview = await newPreview();
    const res = await fetch(pathUrl(preview, ''), { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe(`/previews/${tokenOf(preview)}/`);
  });

  it('proxies a WebSocket both ways', async () => {
    const reply = await websocketRoundTrip(pathUrl(await newPreview(), '/ws'), 'ping');
    expect(reply).toBe('echo:ping');
  });

  /** GET `path` on the preview's own host name (host mode), as a browser on `<token>.<domain>` would. */
  const hostModeGet = (preview: Preview, path: string): Promise<string> =>
    new Promise<string>((done, fail) => {
      const req = request(
        `${api.url}${path}`,
        { headers: { host: `${tokenOf(preview)}.${DOMAIN}` } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => {
            done(text);
          });
        },
      );
      req.once('error', fail);
      req.end();
    });

  it('serves host mode from the path root when the Host is <token>.<domain>', async () => {
    expect(await hostModeGet(await newPreview(), '/hi')).toBe('hello from the dev server at /hi');
  });

  it("serves host mode's /v1 paths from the workspace, not the API's cached reads", async () => {
    const path = `/v1/tasks/${randomUUID()}`;
    expect(await hostModeGet(await newPreview(), path)).toBe(`hello from the dev server at ${path}`);
  });

  it('answers 502 naming the port when nothing in the workspace listens on it', async () => {
    const res = await fetch(pathUrl(await newPreview(await freePort())));
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('bad_gateway');
    expect(body.error.message).toMatch(/^Nothing in the workspace listens on port \d+/);
  });

  it("answers 502 for the API server's own port: another program on the host is not the workspace's", async () => {
    const apiPort = Number(new URL(api.url).port);
    const res = await fetch(pathUrl(await newPreview(apiPort)));
    expect(res.status).toBe(502);
  });

  it('answers 404 once revoked', async () => {
    const preview = await newPreview();
    const revoked = await call(api, `/v1/agent-computers/${workspaceId}/previews/${preview.id}`, {
      key,
      method: 'DELETE',
    });
    expect(revoked.status).toBe(204);
    const res = await fetch(pathUrl(preview));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('answers 404 to a forged MAC', async () => {
    const token = tokenOf(await newPreview());
    const forged = `${token.slice(0, 16)}${token.slice(16).startsWith('a') ? 'b' : 'a'}${token.slice(17)}`;
    const res = await fetch(`${api.url}/previews/${forged}/`);
    expect(res.status).toBe(404);
  });

  it('answers 404 once expired, and lists it no more', async () => {
    const preview = await newPreview();
    const expiresAt = new Date(Date.now() - 1000).toISOString();
    await updateWithRetry(api.store, AgentComputerType, NAMESPACE, workspaceId, (ac) => ({
      ...ac,
      spec: {
        ...ac.spec,
        previews: (ac.spec.previews ?? []).map((p) => (p.id === preview.id ? { ...p, expiresAt } : p)),
      },
    }));
    const token = new PreviewTokens(api.installationKey).sign({
      namespace: NAMESPACE,
      workspace: workspaceId,
      previewId: preview.id,
      port: preview.port,
      expiresAt,
    });
    await eventually(async () => (await fetch(`${api.url}/previews/${token}/`)).status === 404);
    const list = await call(api, `/v1/agent-computers/${workspaceId}/previews`, { key });
    expect(((await list.json()) as { data: Preview[] }).data.map((p) => p.id)).not.toContain(preview.id);
  });

  it("answers 404 to another organization's key, which can neither create nor list", async () => {
    const other = await api.key({ org: 'globex' });
    expect((await createPreview(devPort, other)).status).toBe(404);
    const list = await call(api, `/v1/agent-computers/${workspaceId}/previews`, { key: other });
    expect(list.status).toBe(404);
  });

  it('refuses a port out of range with a validation error', async () => {
    const res = await createPreview(70_000);
    expect(res.status).toBe(400);
  });

  it('wakes a hibernated workspace: the request waits for it and reaches it', async () => {
    const preview = await newPreview();
    await call(api, `/v1/agent-computers/${workspaceId}/stop`, { key, method: 'POST' });
    await eventually(async () => (await workspaceStatus()) === 'hibernated', 60_000);
    // Hibernation stopped the dev server with the rest: the woken workspace answers that nothing listens.
    const res = await fetch(pathUrl(preview));
    expect(res.status).toBe(502);
    expect(await workspaceStatus()).toBe('ready');
  }, 90_000);
});
