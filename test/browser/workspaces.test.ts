// The workspaces page in a real browser against the embedded stack: a task's workspace is listed
// with the tasks on it, hibernate and resume move its shown status, a failed action shows the API's
// message, and a key without agent-computers:write is offered no action.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Locator, Page } from 'playwright-core';
import { z } from 'zod';
import { ORGANIZATION, screenshot, signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';

/** Status changes go through the operator and a runner process: generous, never a speed claim. */
const CONVERGE_MS = 60_000;
const TITLE = 'Workspace page check';

const CreatedTaskSchema = z.object({ id: z.string(), workspaceId: z.string() });
const CreatedWorkspaceSchema = z.object({ id: z.string() });

let ui: BrowserStack;
let key: string;
let task: z.infer<typeof CreatedTaskSchema>;

async function post(path: string, body: unknown): Promise<unknown> {
  const response = await fetch(`${ui.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBeLessThan(300);
  return response.json();
}

/** A fresh browser context signed in with the key, on /workspaces. */
async function openWorkspaces(withKey: string): Promise<Page> {
  const page = await (await ui.newContext()).newPage();
  await signIn(page, withKey, '/workspaces');
  return page;
}

const row = (page: Page, workspaceId: string): Locator => page.locator(`tr[data-workspace="${workspaceId}"]`);

async function confirm(page: Page, action: string, name: string): Promise<void> {
  await page.getByRole('button', { name: `${action} ${name}` }).click();
  await page.getByRole('button', { name: `Yes, ${action.toLowerCase()}` }).click();
}

beforeAll(async () => {
  ui = await startBrowserStack();
  key = ui.key;
  task = CreatedTaskSchema.parse(
    await post('/v1/tasks', { prompt: 'echo hi', executor: 'shell', title: TITLE }),
  );
}, 180_000);

afterAll(async () => {
  await ui.stop();
}, 120_000);

describe('the workspaces page', () => {
  it('lists the workspace a task made, and the task on it links to its page', async () => {
    const page = await openWorkspaces(key);
    const listed = row(page, task.workspaceId);
    await listed.getByRole('button', { name: TITLE, exact: true }).click();
    const link = page
      .getByRole('list', { name: 'Tasks on this workspace' })
      .getByRole('link', { name: TITLE });
    expect(await link.getAttribute('href')).toBe(`/tasks/${task.id}`);
    await page
      .locator(`tr[data-workspace="${task.workspaceId}"] [data-status="ready"]`)
      .waitFor({ timeout: CONVERGE_MS });
    await screenshot(page, 'workspaces');
    await page.context().close();
  }, 120_000);

  it(
    'shows hibernated after Hibernate, then ready after Resume',
    async () => {
      const page = await openWorkspaces(key);
      const status = row(page, task.workspaceId).locator('[data-status]');
      await status.and(page.locator('[data-status="ready"]')).waitFor({ timeout: CONVERGE_MS });
      await confirm(page, 'Hibernate', TITLE);
      await status.and(page.locator('[data-status="hibernated"]')).waitFor({ timeout: CONVERGE_MS });
      await confirm(page, 'Resume', TITLE);
      await status.and(page.locator('[data-status="ready"]')).waitFor({ timeout: CONVERGE_MS });
      await page.context().close();
    },
    3 * CONVERGE_MS,
  );

  it('shows the API’s message when an action fails, and the row stays', async () => {
    const created = CreatedWorkspaceSchema.parse(await post('/v1/agent-computers', { name: 'going away' }));
    const page = await openWorkspaces(key);
    await row(page, created.id).waitFor();
    const gone = await fetch(`${ui.url}/v1/agent-computers/${created.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': key },
    });
    expect(gone.status).toBe(204);
    await confirm(page, 'Hibernate', 'going away');
    const alert = row(page, created.id).getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Agent computer not found');
    await page.context().close();
  }, 120_000);

  it('removes a workspace from the list once Delete is confirmed', async () => {
    const created = CreatedWorkspaceSchema.parse(await post('/v1/agent-computers', { name: 'to delete' }));
    const page = await openWorkspaces(key);
    await row(page, created.id).waitFor();
    await confirm(page, 'Delete', 'to delete');
    await row(page, created.id).waitFor({ state: 'detached' });
    const answer = await fetch(`${ui.url}/v1/agent-computers/${created.id}`, {
      headers: { 'x-api-key': key },
    });
    expect(answer.status).toBe(404);
    await page.context().close();
  }, 120_000);

  it('offers no action to a key without agent-computers:write', async () => {
    const reader = await ui.stack.api.key({
      org: ORGANIZATION,
      scopes: ['agent-computers:read', 'tasks:read'],
    });
    const page = await openWorkspaces(reader);
    await row(page, task.workspaceId).waitFor();
    expect(await page.getByRole('button', { name: /^(Hibernate|Resume|Delete) / }).count()).toBe(0);
    await page.context().close();
  }, 120_000);
});
