import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startEmbeddedStack } from '../../support/embedded-stack.js';
import type { EmbeddedStack } from '../../support/embedded-stack.js';
import { builtPagesRoot } from './built-pages.js';

/** Debian's chromium (scripts/test-packages.txt installs it): the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';

/** The organization and user of the key the harness seeds. */
export const ORGANIZATION = 'acme';
export const USER = 'alice';

export interface BrowserStack {
  /** Where the pages are: the API server's loopback URL, which is also its public URL (the pages' origin). */
  url: string;
  /** An API key of organization `acme`, user `alice`, every scope. */
  key: string;
  /** The embedded default behind the pages: API, operator, `process` runtime with real runners. */
  stack: EmbeddedStack;
  browser: Browser;
  /** A fresh browser context (no cookies) whose relative URLs go to the server; stop() closes it. */
  newContext(): Promise<BrowserContext>;
  stop(): Promise<void>;
}

type StackOptions = NonNullable<Parameters<typeof startEmbeddedStack>[0]>;

/**
 * The embedded stack on loopback serving the pages global setup built, an organization with a key,
 * and headless Chromium. One per test file (beforeAll), stopped in afterAll.
 */
export async function startBrowserStack(options: Omit<StackOptions, 'web'> = {}): Promise<BrowserStack> {
  const stack = await startEmbeddedStack({
    prefix: 'agentry-browser-',
    ...options,
    web: { webRoot: builtPagesRoot(), loopbackPublicUrl: true },
  });
  let browser: Browser | undefined;
  try {
    const key = await stack.api.key({ org: ORGANIZATION, user: USER, scopes: ['*'] });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    const launched = browser;
    const contexts: BrowserContext[] = [];
    return {
      url: stack.api.url,
      key,
      stack,
      browser: launched,
      async newContext() {
        const context = await launched.newContext({ baseURL: stack.api.url });
        contexts.push(context);
        return context;
      },
      async stop() {
        await Promise.all(contexts.map((context) => context.close()));
        await launched.close();
        await stack.stop();
      },
    };
  } catch (err) {
    await browser?.close();
    await stack.stop();
    throw err;
  }
}

/** Signs in on the sign-in page as a person would, and waits until the app has left it. */
export async function signIn(page: Page, key: string, next?: string): Promise<void> {
  await page.goto(next === undefined ? '/login' : `/login?next=${encodeURIComponent(next)}`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => url.pathname !== '/login');
}

/** Console messages of Content-Security-Policy violations on the page, as they happen. */
export function cspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(message.text());
  });
  return violations;
}

/**
 * Saves `docs/images/ui-<name>.png` when AGENTRY_SCREENSHOTS=1 (the README's pictures), and does
 * nothing otherwise, so that a test run leaves the tree as it was.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.AGENTRY_SCREENSHOTS !== '1') return;
  const dir = resolve('docs/images');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: resolve(dir, `ui-${name}.png`), fullPage: true });
}
