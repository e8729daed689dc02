import type { Page } from 'playwright-core';
import { z } from 'zod';
import { call } from '../support/api-server.js';
import type { TestApi } from '../support/api-server.js';
import { readTaskStream } from '../support/sse.js';
import { signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';

/** What the task pages' browser tests make through the API with a key, as any client would. */

const CreatedSchema = z.object({ id: z.string(), workspaceId: z.string() });

/** An agent computer the file's tasks share: one runner process, not one per task. */
export async function createWorkspace(api: TestApi, key: string): Promise<string> {
  const res = await call(api, '/v1/agent-computers', {
    key,
    method: 'POST',
    body: { name: 'browser tests' },
  });
  if (res.status !== 201) throw new Error(`creating a workspace answered ${res.status}`);
  return z.object({ id: z.string() }).parse(await res.json()).id;
}

/** A task, `shell` unless it names another executor (a shell prompt is a bash script run in /code). */
export async function createTask(
  api: TestApi,
  key: string,
  body: { prompt: string; executor?: string; title?: string; workspaceId?: string },
): Promise<z.infer<typeof CreatedSchema>> {
  const res = await call(api, '/v1/tasks', { key, method: 'POST', body: { executor: 'shell', ...body } });
  if (res.status !== 201) throw new Error(`creating a task answered ${res.status}: ${await res.text()}`);
  return CreatedSchema.parse(await res.json());
}

/** Waits for the task's stream to end (every prompt final), as an API client would. */
export async function untilDone(api: TestApi, key: string, taskId: string): Promise<void> {
  const read = await readTaskStream(`${api.url}/v1/tasks/${taskId}/events`, { key, timeoutMs: 120_000 });
  if (read.done === undefined) throw new Error(`the task's stream answered ${read.status} without done`);
}

/** The browser harness with an agent computer that the test file's tasks share. */
export async function startWithWorkspace(): Promise<{ ui: BrowserStack; workspaceId: string }> {
  const ui = await startBrowserStack();
  try {
    return { ui, workspaceId: await createWorkspace(ui.stack.api, ui.key) };
  } catch (err) {
    await ui.stop();
    throw err;
  }
}

/** A page in a fresh browser context (no cookies), signed in with `key` when one is given. */
export async function freshPage(ui: BrowserStack, key?: string): Promise<Page> {
  const page = await (await ui.newContext()).newPage();
  if (key !== undefined) await signIn(page, key);
  return page;
}
