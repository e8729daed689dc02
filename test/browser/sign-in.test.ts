import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ORGANIZATION,
  cspViolations,
  screenshot,
  signIn,
  startBrowserStack,
} from './harness/browser-stack.js';
import type { BrowserStack } from './harness/browser-stack.js';

// Signing in and out in a real browser (docs/api.md#web-pages): the key goes once to the server,
// which keeps the session in an HttpOnly cookie the page's scripts cannot read.

let ui: BrowserStack;

beforeAll(async () => {
  ui = await startBrowserStack();
});
afterAll(async () => {
  await ui.stop();
});

describe('signing in', () => {
  it('sends a signed-out reader of a page to the sign-in page, to come back after', async () => {
    const page = await (await ui.newContext()).newPage();
    await page.goto('/workspaces');
    await page.waitForURL((url) => url.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('next')).toBe('/workspaces');
    await screenshot(page, 'sign-in');
  });

  it('shows an error for a wrong key and stays on the sign-in page', async () => {
    const page = await (await ui.newContext()).newPage();
    await page.goto('/login');
    await page.getByLabel('API key').fill('agk_not-a-real-key-at-all-0000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not valid/);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('signs in with the right key, reaches the page it came for, and breaks no CSP rule', async () => {
    const page = await (await ui.newContext()).newPage();
    const violations = cspViolations(page);
    await signIn(page, ui.key, '/lake');
    expect(new URL(page.url()).pathname).toBe('/lake');
    await signIn(page, ui.key);
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.getByText(ORGANIZATION, { exact: true }).isVisible()).resolves.toBe(true);
    expect(violations).toEqual([]);
  });

  it('keeps the session in an HttpOnly cookie that page scripts cannot read', async () => {
    const context = await ui.newContext();
    const page = await context.newPage();
    await signIn(page, ui.key);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'agentry_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie?.value).not.toContain(ui.key);
    // Expressions, evaluated in the page (this file is type-checked without the DOM's types).
    await expect(page.evaluate('document.cookie')).resolves.toBe('');
    await expect(page.evaluate('localStorage.length + sessionStorage.length')).resolves.toBe(0);
  });

  it('signs out back to the sign-in page, and the session is gone', async () => {
    const context = await ui.newContext();
    const page = await context.newPage();
    await signIn(page, ui.key);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.pathname === '/login');
    expect(await context.cookies()).toEqual([]);
    const session = await page.evaluate("fetch('/ui/session').then((res) => res.status)");
    expect(session).toBe(401);
  });
});
