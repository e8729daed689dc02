import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { call } from '../support/api-server.js';
import { signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';

// A task's `url` and `shareUrl` handed to a person (docs/api.md#web-pages): the browser lands on the
// task's page (after signing in) or on the share page (without), where an API client gets JSON.

const CreatedSchema = z.object({ id: z.string(), url: z.string() });
const SharedSchema = z.object({ shareUrl: z.string() });

let ui: BrowserStack;
let task: z.infer<typeof CreatedSchema>;

beforeAll(async () => {
  ui = await startBrowserStack();
  const created = await call(ui.stack.api, '/v1/tasks', {
    key: ui.key,
    method: 'POST',
    body: { prompt: 'echo hello', executor: 'shell' },
  });
  task = CreatedSchema.parse(await created.json());
});
afterAll(async () => {
  await ui.stop();
});

describe("a task's links in a browser", () => {
  it("takes a signed-out person from the task's url through sign-in to its page", async () => {
    const page = await (await ui.newContext()).newPage();
    await page.goto(task.url);
    await page.waitForURL((url) => url.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe(`/tasks/${task.id}`);
    await page.getByLabel('API key').fill(ui.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === `/tasks/${task.id}`);
  });

  it("opens the task's url on its page for a signed-in person", async () => {
    const page = await (await ui.newContext()).newPage();
    await signIn(page, ui.key);
    const response = await page.goto(task.url);
    expect(new URL(page.url()).pathname).toBe(`/tasks/${task.id}`);
    expect(response?.status()).toBe(200);
  });

  it('opens a shareUrl on the share page in a fresh context, without signing in', async () => {
    const made = await call(ui.stack.api, `/v1/tasks/${task.id}/visibility`, {
      key: ui.key,
      method: 'PATCH',
      body: { visibility: 'public' },
    });
    const { shareUrl } = SharedSchema.parse(await made.json());
    const page = await (await ui.newContext()).newPage();
    const sessionAsked = page.waitForResponse((res) => new URL(res.url()).pathname === '/ui/session');
    await page.goto(shareUrl);
    const token = shareUrl.slice(shareUrl.lastIndexOf('/') + 1);
    expect(new URL(page.url()).pathname).toBe(`/share/${token}`);
    // Once the app knows there is no session (401), its guard has had its chance: it leaves share
    // pages alone. Preact runs effects after the next frame; two frames and a task later it has.
    expect((await sessionAsked).status()).toBe(401);
    await page.evaluate(
      'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(done, 0))))',
    );
    expect(new URL(page.url()).pathname).toBe(`/share/${token}`);
  });
});
