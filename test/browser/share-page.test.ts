// The share page in headless Chromium: a public task's share link, opened in a fresh context with
// no session, shows the conversation and nothing else; a private task's link leads nowhere.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { call } from '../support/api-server.js';
import { screenshot, signIn } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';
import { createTask, freshPage, startWithWorkspace, untilDone } from './task-pages-support.js';

let harness: BrowserStack;
let workspaceId: string;

beforeAll(async () => {
  ({ ui: harness, workspaceId } = await startWithWorkspace());
}, 180_000);

afterAll(async () => {
  await harness.stop();
}, 120_000);

/** A finished task with an artifact, made public on its page; answers the share link the page shows. */
async function publicTaskLink(page: Page, prompt: string): Promise<{ id: string; shareUrl: string }> {
  const { id } = await createTask(harness.stack.api, harness.key, {
    prompt,
    workspaceId,
    title: 'Shared work',
  });
  await untilDone(harness.stack.api, harness.key, id);
  await signIn(page, harness.key);
  await page.goto(`/tasks/${id}`);
  await page.getByLabel('Visibility').selectOption('public');
  const link = page.locator('.share-link a');
  await link.waitFor();
  const shareUrl = await link.getAttribute('href');
  if (shareUrl === null) throw new Error('the share link has no address');
  return { id, shareUrl };
}

describe('the share page', () => {
  it('shows a public task read-only, without a session', async () => {
    const owner = await freshPage(harness);
    const { shareUrl } = await publicTaskLink(
      owner,
      'echo "shared output"\nmkdir -p artifacts\necho private-bytes > artifacts/kept.txt',
    );
    const reader = await freshPage(harness);
    // The task's shareUrl is the API's (/v1/share/:token): a browser is sent on to the page.
    await reader.goto(shareUrl);
    expect(new URL(reader.url()).pathname).toMatch(/^\/share\//);
    await reader.getByRole('heading', { name: 'Shared work' }).waitFor();
    await reader.locator('.row.text').filter({ hasText: 'shared output' }).waitFor({ timeout: 60_000 });
    await reader.getByRole('status').filter({ hasText: 'Finished' }).waitFor();
    await expect(reader.getByLabel('Follow-up').count()).resolves.toBe(0);
    await expect(reader.getByRole('button', { name: 'Cancel' }).count()).resolves.toBe(0);
    await expect(reader.getByLabel('Visibility').count()).resolves.toBe(0);
    await expect(reader.getByRole('heading', { name: 'Artifacts' }).count()).resolves.toBe(0);
    await expect(reader.getByRole('link', { name: 'kept.txt' }).count()).resolves.toBe(0);
    await expect(reader.getByRole('button', { name: 'Sign out' }).count()).resolves.toBe(0);
    await screenshot(reader, 'share');
  });

  it('says not shared once the task is private again', async () => {
    const owner = await freshPage(harness);
    const { shareUrl } = await publicTaskLink(owner, 'echo "soon private"');
    await owner.getByLabel('Visibility').selectOption('private');
    await owner.locator('.share-link').waitFor({ state: 'detached' });
    const token = new URL(shareUrl).pathname.split('/').at(-1) ?? '';
    await expect(call(harness.stack.api, `/v1/share/${token}`).then((res) => res.status)).resolves.toBe(404);
    const reader = await freshPage(harness);
    await reader.goto(`/share/${token}`);
    await reader.getByRole('heading', { name: 'Not shared' }).waitFor();
    await expect(reader.getByText('soon private').count()).resolves.toBe(0);
  });
});
