// The tasks list in headless Chromium: it pages through the organization's tasks, newest first,
// each linking to its page, and shows no other organization's (signing in: sign-in.test.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { screenshot } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';
import { createTask, freshPage, startWithWorkspace, untilDone } from './task-pages-support.js';

/** One more than the page's 25, so the list has a second page. */
const TASKS = 26;

let harness: BrowserStack;

beforeAll(async () => {
  const started = await startWithWorkspace();
  harness = started.ui;
  const { workspaceId } = started;
  const api = harness.stack.api;
  // One after another: an organization runs at most 10 tasks at once (docs/api.md#limits).
  for (let n = 1; n <= TASKS; n += 1) {
    const { id } = await createTask(api, harness.key, {
      prompt: 'true',
      title: `Task number ${n}`,
      workspaceId,
    });
    await untilDone(api, harness.key, id);
  }
  const other = await api.key({ org: 'other-org', user: 'mallory' });
  const { id } = await createTask(api, other, { prompt: 'true', title: 'Task of other-org' });
  await untilDone(api, other, id);
}, 180_000);

afterAll(async () => {
  await harness.stop();
}, 120_000);

const titles = (page: Page): Promise<string[]> =>
  page.locator('table.tasks tbody td:first-child a').allTextContents();

describe('the tasks list', () => {
  it("pages through the organization's tasks, newest first, each linking to its page", async () => {
    const page = await freshPage(harness, harness.key);
    await page.goto('/');
    await page.getByText(`1–25 of ${TASKS}`).waitFor();
    const first = await titles(page);
    expect(first).toHaveLength(25);
    expect(first[0]).toBe(`Task number ${TASKS}`);
    expect(first).not.toContain('Task of other-org');
    await screenshot(page, 'tasks');
    await page.getByRole('link', { name: 'Older →' }).click();
    await page.getByText(`26–26 of ${TASKS}`).waitFor();
    await expect(titles(page)).resolves.toEqual(['Task number 1']);
    await page.getByRole('link', { name: 'Task number 1' }).click();
    await page.getByRole('heading', { name: 'Task number 1' }).waitFor();
  });
});
