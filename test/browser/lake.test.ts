// The lake console in a real browser against the embedded stack: a dataset seeded from the
// organization's file root (as `agentry serve` allows) is listed, SQL runs on the real lake server
// (DuckDB) and its rows, errors and truncation are shown, and a free-plan organization is told the
// lake needs the Pro plan.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { organizationFileRoot } from '../../platform/lake-config/file-roots.js';
import { startAdminStack } from './admin-stack.js';
import type { AdminStack } from './admin-stack.js';

/** The first query starts the lake server (a process, DuckDB): generous, never a speed claim. */
const LAKE_MS = 120_000;

let stack: AdminStack;
let key: string;

async function openLake(withKey: string): Promise<Page> {
  const page = await stack.newPage();
  await stack.signIn(page, withKey);
  await page.goto(`${stack.url}/lake`);
  return page;
}

async function runQuery(page: Page, query: string): Promise<void> {
  const box = page.getByRole('textbox', { name: 'SQL query' });
  await box.fill(query);
  await box.press('Control+Enter');
}

beforeAll(async () => {
  stack = await startAdminStack();
  key = await stack.key({ org: 'acme' });
  const root = organizationFileRoot(stack.stack.dir, 'agentry-org-acme');
  await mkdir(root, { recursive: true });
  await writeFile(join(root, 'people.csv'), 'id,name\n1,ada\n2,bob\n3,cy\n');
  const created = await fetch(`${stack.url}/v1/context-lake/datasets`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'people', from: `file://${join(root, 'people.csv')}` }),
  });
  expect(created.status).toBe(201);
}, 180_000);

afterAll(async () => {
  await stack.stop();
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

  it(
    'runs SQL with Ctrl+Enter and shows the rows as a table',
    async () => {
      const page = await openLake(key);
      await runQuery(page, 'SELECT id, name FROM people ORDER BY id');
      await page.getByRole('cell', { name: 'bob', exact: true }).waitFor({ timeout: LAKE_MS });
      const names = await page.locator('table.sql-rows tbody tr td:nth-child(2)').allTextContents();
      expect(names).toEqual(['ada', 'bob', 'cy']);
      await page.locator('tr[data-dataset="people"] [data-status="ready"]').waitFor({ timeout: LAKE_MS });
      await stack.screenshot(page, 'lake');
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
    const free = await stack.key({ org: 'freeco', plan: 'free' });
    const page = await openLake(free);
    const message = page.getByRole('alert');
    await message.waitFor();
    expect(await message.textContent()).toContain('needs the Pro plan');
    expect(await page.getByRole('textbox', { name: 'SQL query' }).count()).toBe(0);
    await page.context().close();
  }, 60_000);
});
