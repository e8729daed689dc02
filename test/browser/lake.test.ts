// The lake console in a real browser against the embedded stack: a dataset seeded from the
// organization's file root (as `agentry serve` allows) is listed, SQL runs on the real lake server
// (DuckDB) and its rows, errors and truncation are shown, and a free-plan organization is told the
// lake needs the Pro plan.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { organizationFileRoot } from '../../platform/lake-config/file-roots.js';
import { ORGANIZATION, screenshot, signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';

/** The first query starts the lake server (a process, DuckDB): generous, never a speed claim. */
const LAKE_MS = 120_000;

let ui: BrowserStack;
let key: string;

/** A fresh browser context signed in with the key, on /lake. */
async function openLake(withKey: string): Promise<Page> {
  const page = await (await ui.newContext()).newPage();
  await signIn(page, withKey, '/lake');
  return page;
}

async function runQuery(page: Page, query: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'SQL query' });
  await box.fill(query);
  await box.press('Control+Enter');
}

beforeAll(async () => {
  ui = await startBrowserStack();
  key = ui.key;
  const root = organizationFileRoot(ui.stack.dir, `agentry-org-${ORGANIZATION}`);
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'people.csv'), 'id,name\n1,ada\n2,bob\n3,cy\n');
  const created = await fetch(`${ui.url}/v1/context-lake/datasets`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'people', from: `file://${join(root, 'people.csv')}` }),
  });
  expect(created.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await ui.stop();
}, 120_000);

describe('the lake console', () => {
  it('lists a dataset with its source and status', async () => {
    const page = await openLake(key);
    const dataset = page.locator('tr[data-dataset="people"]');
    await dataset.waitFor();
    expect(await dataset.textContent()).toContain('people.csv');
    expect(await dataset.locator('[data-status]').count()).toBe(1);
    await page.context().close();
  }, 60_000);

  // Regression: the shared controls' stylesheet came only with the confirmation button, which the
  // lake console does not use, so its statuses and tables were unstyled.
  it('loads its stylesheet with the page: a dataset status is a badge', async () => {
    const page = await openLake(key);
    await page.locator('tr[data-dataset="people"] [data-status]').waitFor();
    // An expression evaluated in the page (this file is type-checked without the DOM's types).
    const radius = await page.evaluate(
      "getComputedStyle(document.querySelector('tr[data-dataset=people] [data-status]')).borderTopLeftRadius",
    );
    expect(radius).not.toBe('0px');
    await page.context().close();
  }, 60_000);

  it(
    'runs SQL with Ctrl+Enter and shows the rows as a table',
    async () => {
      const page = await openLake(key);
      await runQuery(page, 'SELECT id, name FROM people ORDER BY id');
      await page.getByRole('cell', { name: 'bob', exact: true }).waitFor({ timeout: LAKE_MS });
      const names = await page.locator('table.sql-rows tbody tr td:nth-child(2)').allTextContents();
      expect(names).toEqual(['ada', 'bob', 'cy']);
      await page.locator('tr[data-dataset="people"] [data-status="ready"]').waitFor({ timeout: LAKE_MS });
      await screenshot(page, 'lake');
      await page.context().close();
    },
    LAKE_MS + 60_000,
  );

  it(
    'shows how many rows the lake holds of a dataset and how current the answer is',
    async () => {
      const page = await openLake(key);
      await runQuery(page, 'SELECT count(*) AS n FROM people');
      await page.locator('.sql-result .data-as-of time').waitFor({ timeout: LAKE_MS });
      const data = page.locator('tr[data-dataset="people"] td.dataset-data');
      // The status poll brings the lake's facts in after its first load.
      await page.waitForFunction(
        "document.querySelector('tr[data-dataset=people] td.dataset-data')?.textContent?.includes('3 rows')",
        undefined,
        { timeout: LAKE_MS },
      );
      expect(await data.textContent()).toMatch(/3 rows · \d+ B · as of /);
      await page.context().close();
    },
    LAKE_MS + 60_000,
  );

  it(
    'shows an SQL error as the engine’s message',
    async () => {
      const page = await openLake(key);
      await runQuery(page, 'SELECT no_such_column FROM people');
      const error = page.locator('.sql-error');
      await error.waitFor({ timeout: LAKE_MS });
      const text = await error.textContent();
      expect(text).toMatch(/^SQL error: /);
      expect(text).toContain('no_such_column');
      await page.context().close();
    },
    LAKE_MS + 60_000,
  );

  it(
    'says a result was truncated and fetches the rows after it',
    async () => {
      const page = await openLake(key);
      await runQuery(page, 'SELECT range AS n FROM range(10050) ORDER BY n;');
      const notice = page.locator('.truncated');
      await notice.waitFor({ timeout: LAKE_MS });
      expect(await notice.textContent()).toContain('truncated');
      await page.getByRole('button', { name: 'Next 10,000 rows' }).click();
      await page.getByRole('cell', { name: '10000', exact: true }).waitFor({ timeout: LAKE_MS });
      expect(await page.locator('table.sql-rows tbody tr').count()).toBe(50);
      expect(await page.locator('.sql-result > p.muted').textContent()).toContain('rows 10,001–10,050');
      await page.context().close();
    },
    LAKE_MS + 60_000,
  );

  it('tells an organization without the Pro plan that the lake needs it', async () => {
    await ui.stack.api.organization('freeco', 'free');
    const free = await ui.stack.api.key({ org: 'freeco' });
    const page = await openLake(free);
    const message = page.getByRole('alert');
    await message.waitFor();
    expect(await message.textContent()).toContain('needs the Pro plan');
    expect(await page.getByRole('textbox', { name: 'SQL query' }).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});
