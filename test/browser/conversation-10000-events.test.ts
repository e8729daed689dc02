// A task of 10,000 events stays usable on its page (docs/benchmarks.md#web-pages-10000-events):
// the conversation shows the last event, keeps the DOM small (windowed rows, grouped lines) and
// scrolls to the top and back. With AGENTRY_BENCH=1 it prints the figures, beside a bare
// EventSource reading the same stream in the same browser (the transport's own time).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BrowserContext, Page } from 'playwright-core';
import { z } from 'zod';
import { signIn, startBrowserStack } from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';
import { createTask, untilDone } from './task-pages-support.js';

const EVENTS = 10_000;
/** A generous bound: the rows near the viewport and the page around them, not one node per event. */
const MAX_ELEMENTS = 1_500;

let harness: BrowserStack;
let context: BrowserContext;
let taskId: string;

beforeAll(async () => {
  harness = await startBrowserStack();
  const { id } = await createTask(harness.stack.api, harness.key, {
    prompt: `for i in $(seq 1 ${EVENTS}); do echo "event line $i"; done`,
    title: '10,000 events',
  });
  taskId = id;
  await untilDone(harness.stack.api, harness.key, id);
  context = await harness.newContext();
}, 300_000);

afterAll(async () => {
  await harness.stop();
}, 120_000);

// Page-side code is written as expressions evaluated in the page (this file is type-checked
// without the DOM's types); waits use locators, as the pages' CSP refuses string functions.
const FEED = "document.querySelector('[role=feed]')";

/** Resolves once a text row of the conversation ends with `line` (or starts with it). */
const untilRowShows = (page: Page, line: string, at: 'start' | 'end'): Promise<void> =>
  page
    .locator('.conversation .row.text pre')
    .filter({ hasText: at === 'end' ? new RegExp(`${line}$`) : new RegExp(`^${line}\\s`) })
    .waitFor({ timeout: 120_000 });

const elementCount = async (page: Page): Promise<number> =>
  z.number().parse(await page.evaluate("document.getElementsByTagName('*').length"));

/** Milliseconds `action` takes. */
async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return Math.round(performance.now() - start);
}

/** The stream alone: a bare EventSource in the page counting events until `done`. */
const bareStreamMs = async (page: Page): Promise<number> => {
  const url = JSON.stringify(`/v1/tasks/${taskId}/events?all=true`);
  const measured = await page.evaluate(`new Promise((resolve, reject) => {
    const start = performance.now();
    const source = new EventSource(${url});
    source.addEventListener('done', () => { source.close(); resolve(Math.round(performance.now() - start)); });
    source.onerror = () => { source.close(); reject(new Error('the stream failed')); };
  })`);
  return z.number().parse(measured);
};

describe('a task of 10,000 events on its page', () => {
  it('shows the last event, keeps the DOM small, and scrolls to the top and back', async () => {
    const page = await context.newPage();
    await signIn(page, harness.key);
    const transportMs = await bareStreamMs(page);

    const lastShownMs = await timed(async () => {
      await page.goto(`/tasks/${taskId}`);
      await untilRowShows(page, `event line ${EVENTS}`, 'end');
    });
    const elements = await elementCount(page);
    expect(elements).toBeLessThan(MAX_ELEMENTS);

    const topMs = await timed(async () => {
      await page.evaluate(`${FEED}.scrollTop = 0`);
      await untilRowShows(page, 'event line 1', 'start');
    });
    const elementsAtTop = await elementCount(page);
    expect(elementsAtTop).toBeLessThan(MAX_ELEMENTS);
    const endMs = await timed(async () => {
      await page.evaluate(`${FEED}.scrollTop = ${FEED}.scrollHeight`);
      await untilRowShows(page, `event line ${EVENTS}`, 'end');
    });

    if (process.env.AGENTRY_BENCH === '1') {
      const figures = { transportMs, lastShownMs, elements, topMs, elementsAtTop, endMs };
      process.stdout.write(`web pages, ${EVENTS} events: ${JSON.stringify(figures)}\n`);
    }
  });
});
