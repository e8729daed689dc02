// An agent's conversation on the task page, in headless Chromium: an executor that speaks Claude
// Code's stream-json (bash printing it) gives thinking, text, tool calls with their results, an
// error and a result through the real parser; the page folds the calls, cuts long output with
// "show more", and shows the agent's text as text, never as markup.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Page } from 'playwright-core';
import { ExecutorCatalog, ExecutorDefinitionSchema } from '../../platform/executor-catalog.js';
import { signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';
import { createTask, untilDone } from './task-pages-support.js';

/** Prints its prompt: the prompt is the stream-json an agent would write. */
const REPLAY_EXECUTOR = ExecutorDefinitionSchema.parse({
  name: 'replay',
  format: 'claude-stream-json',
  command: 'bash',
  args: ['-c', 'printf "%s\\n" "$1"', 'replay', '{prompt}'],
  promptVia: 'argument',
  env: {},
  timeout: '5m',
});

const LISTING = Array.from({ length: 60 }, (_, i) => `file-${i + 1}.ts`).join('\n');

const assistant = (content: unknown[]) => ({ type: 'assistant', message: { role: 'assistant', content } });
const toolResult = (id: string, content: string, isError: boolean) => ({
  type: 'user',
  message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content, is_error: isError }] },
});

const STREAM = [
  { type: 'system', subtype: 'init', cwd: '/code', session_id: 's', tools: [], model: 'replayed' },
  assistant([
    { type: 'thinking', thinking: 'Planning the change', signature: 'x' },
    { type: 'text', text: 'I will list the files.' },
    { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls -1' } },
  ]),
  toolResult('toolu_1', LISTING, false),
  assistant([{ type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/code/missing.ts' } }]),
  toolResult('toolu_2', 'File does not exist.', true),
  assistant([{ type: 'text', text: 'Shown as text: <b id="injected">not bold</b>' }]),
  { type: 'result', subtype: 'success', is_error: false, result: 'All done.', session_id: 's' },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

let harness: BrowserStack;
let page: Page;

beforeAll(async () => {
  harness = await startBrowserStack({ executors: new ExecutorCatalog([REPLAY_EXECUTOR]) });
  const { id } = await createTask(harness.stack.api, harness.key, {
    executor: 'replay',
    prompt: STREAM,
    title: 'An agent at work',
  });
  await untilDone(harness.stack.api, harness.key, id);
  page = await (await harness.newContext()).newPage();
  await signIn(page, harness.key);
  await page.goto(`/tasks/${id}`);
  await page.getByRole('status').filter({ hasText: 'Finished' }).waitFor({ timeout: 60_000 });
}, 180_000);

afterAll(async () => {
  await harness.stop();
}, 120_000);

describe("an agent's conversation on the task page", () => {
  it('shows thinking and text', async () => {
    await page.locator('.row.thinking').getByText('Planning the change').waitFor();
    await page.locator('.row.text').getByText('I will list the files.').waitFor();
  });

  it('folds a tool call with its input and result, and cuts long output with show more', async () => {
    const bash = page.locator('details.row.tool').filter({ hasText: 'Bash' });
    await expect(bash.locator('summary').textContent()).resolves.toContain('ls -1');
    await expect(bash.getByText('file-1.ts').isVisible()).resolves.toBe(false);
    await bash.locator('summary').click();
    await bash.getByText('file-1.ts', { exact: false }).first().waitFor();
    await expect(bash.getByText('file-60.ts').count()).resolves.toBe(0);
    await bash.getByRole('button', { name: /Show more/ }).click();
    await bash.getByText('file-60.ts', { exact: false }).waitFor();
  });

  it('marks a tool call that failed', async () => {
    const read = page.locator('details.row.tool').filter({ hasText: 'Read' });
    await expect(read.locator('.tool-state').textContent()).resolves.toBe('error');
  });

  it("shows the agent's text as text, never as markup", async () => {
    await page.getByText('Shown as text: <b id="injected">not bold</b>').waitFor();
    await expect(page.locator('#injected').count()).resolves.toBe(0);
  });

  it('ends with the result', async () => {
    await page.locator('.row.result').getByText('All done.').waitFor();
  });
});
