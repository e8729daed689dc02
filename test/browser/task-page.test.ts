// The task page in headless Chromium against the embedded stack: a `shell` task's conversation
// streams to done, a follow-up runs, cancel ends a prompt, an artifact downloads, a dropped stream
// resumes without duplicates, and neither another organization's task nor a scope the key lacks
// shows.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { screenshot } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';
import { startConnectionCutter } from './connection-cutter.js';
import { createTask, freshPage, startWithWorkspace, untilDone } from './task-pages-support.js';

let harness: BrowserStack;
let workspaceId: string;

beforeAll(async () => {
  ({ ui: harness, workspaceId } = await startWithWorkspace());
}, 180_000);

afterAll(async () => {
  await harness.stop();
}, 120_000);

/** A fresh browser context (its own cookies), signed in with `key`. */
const signedInPage = (key = harness.key): Promise<Page> => freshPage(harness, key);

const task = (prompt: string, title?: string) =>
  createTask(harness.stack.api, harness.key, {
    prompt,
    workspaceId,
    ...(title === undefined ? {} : { title }),
  });

/** The conversation's output rows (stdout and stderr), in order, as one text. */
const conversationText = async (page: Page): Promise<string> =>
  (await page.locator('.conversation .row:is(.text, .stderr) pre').allTextContents()).join('\n');

describe('the task page', () => {
  it('streams a shell task to done as a conversation', async () => {
    const { id } = await task(
      'echo "first line"\nsleep 1\necho "second line"\necho "to stderr" >&2',
      'Streaming',
    );
    const page = await signedInPage();
    await page.goto(`/tasks/${id}`);
    await page.getByRole('heading', { name: 'Streaming' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor({ timeout: 60_000 });
    await expect(conversationText(page)).resolves.toBe('first line\nsecond line\nto stderr');
    await page.locator('.task-header .status-completed').waitFor();
    await page.locator('.row.stderr').getByText('to stderr').waitFor();
    await page.locator('.row.result').getByText('first line').waitFor();
  });

  it('runs a follow-up sent from the page and streams it', async () => {
    const { id } = await task('echo "turn one"', 'Two turns in one workspace');
    const page = await signedInPage();
    await page.goto(`/tasks/${id}`);
    await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor({ timeout: 60_000 });
    await page.getByLabel('Follow-up').fill('echo "turn two"');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('.row.prompt').filter({ hasText: 'echo "turn two"' }).waitFor();
    await page.locator('.row.text').filter({ hasText: 'turn two' }).waitFor({ timeout: 60_000 });
    await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor({ timeout: 60_000 });
    await expect(conversationText(page)).resolves.toBe('turn one\nturn two');
    await screenshot(page, 'task');
  });

  it('cancels a running prompt', async () => {
    const { id } = await task('echo "about to wait"\nsleep 600');
    const page = await signedInPage();
    await page.goto(`/tasks/${id}`);
    await page.locator('.row.text').filter({ hasText: 'about to wait' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.locator('.row.notice').filter({ hasText: 'Prompt canceled' }).waitFor({ timeout: 60_000 });
    await page.locator('.task-header .status-canceled').waitFor();
    await expect(page.getByRole('button', { name: 'Cancel' }).count()).resolves.toBe(0);
  });

  it('downloads an artifact with the bytes the task wrote', async () => {
    const bytes = 'report line 1\nreport line 2 é\n';
    const { id } = await task(`mkdir -p artifacts/reports\nprintf '${bytes}' > artifacts/reports/q3.txt`);
    await untilDone(harness.stack.api, harness.key, id);
    const page = await signedInPage();
    await page.goto(`/tasks/${id}`);
    const link = page.getByRole('link', { name: 'reports/q3.txt' });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe('q3.txt');
    await expect(readFile(await download.path(), 'utf8')).resolves.toBe(bytes);
  });

  it('resumes a dropped stream with Last-Event-ID and shows each event once', async () => {
    // Slow enough that the page is reading the live stream when the connection is cut.
    const { id } = await task('for i in $(seq 1 30); do echo "tick $i"; sleep 0.3; done');
    const cutter = await startConnectionCutter(new URL(harness.url));
    try {
      // The session cookie is the host's (127.0.0.1), whatever the port: the relay's pages have it too.
      const page = await signedInPage();
      await page.goto(`${cutter.url}/tasks/${id}`);
      await page
        .locator('.row.text')
        .filter({ hasText: /^tick 1\s/ })
        .waitFor({ timeout: 60_000 });
      cutter.cutAll();
      await page.getByRole('status').filter({ hasText: 'Reconnecting' }).waitFor();
      await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor({ timeout: 60_000 });
      const ticks = (await conversationText(page)).split('\n');
      expect(ticks).toEqual(Array.from({ length: 30 }, (_, i) => `tick ${i + 1}`));
      const resumed = cutter
        .requestHeads()
        .filter((head) => head.includes(`/v1/tasks/${id}/events`))
        .map((head) => /^last-event-id: (\d+)$/im.exec(head)?.[1]);
      expect(resumed[0]).toBeUndefined();
      expect(resumed.slice(1)).toContainEqual(expect.stringMatching(/^\d+$/));
    } finally {
      await cutter.close();
    }
  });

  it("says not found for another organization's task", async () => {
    const otherKey = await harness.stack.api.key({ org: 'other-org', user: 'mallory' });
    const { id } = await createTask(harness.stack.api, otherKey, {
      prompt: 'echo "secret of other-org"',
    });
    await untilDone(harness.stack.api, otherKey, id);
    const page = await signedInPage();
    await page.goto(`/tasks/${id}`);
    await page.getByRole('heading', { name: 'Task not found' }).waitFor();
    await expect(page.getByText('secret of other-org').count()).resolves.toBe(0);
  });

  it('hides what a read-only key may not do', async () => {
    const { id } = await task('echo "read me"');
    const readOnly = await harness.stack.api.key({ user: 'reader', scopes: ['tasks:read'] });
    const page = await signedInPage(readOnly);
    await page.goto(`/tasks/${id}`);
    await page.locator('.row.text').filter({ hasText: 'read me' }).waitFor({ timeout: 60_000 });
    await expect(page.getByLabel('Follow-up').count()).resolves.toBe(0);
    await expect(page.getByLabel('Visibility').count()).resolves.toBe(0);
    await expect(page.getByRole('heading', { name: 'Artifacts' }).count()).resolves.toBe(0);
  });
});
