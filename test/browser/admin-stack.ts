// TEMPORARY shim until ui-server's harness (test/browser/harness/) is on main: the embedded stack,
// the built pages served through Playwright route interception, the key sent as a header.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import type { Scope } from '../../api/auth/scopes.js';
import { startEmbeddedStack } from '../support/embedded-stack.js';
import type { EmbeddedStack } from '../support/embedded-stack.js';

export interface AdminStack {
  url: string;
  stack: EmbeddedStack;
  key(options: { org?: string; scopes?: Scope[]; plan?: 'free' | 'pro' }): Promise<string>;
  newPage(): Promise<Page>;
  signIn(page: Page, key: string): Promise<void>;
  screenshot(page: Page, name: string): Promise<void>;
  stop(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.map': 'application/json',
};

export async function startAdminStack(): Promise<AdminStack> {
  const out = await mkdtemp(join(tmpdir(), 'agentry-web-'));
  execFileSync('npx', [
    'vite',
    'build',
    '--config',
    'web/vite.config.ts',
    '--outDir',
    out,
    '--logLevel',
    'warn',
  ]);
  const stack = await startEmbeddedStack({ prefix: 'agentry-browser-admin-' });
  const browser: Browser = await chromium.launch({ executablePath: '/usr/bin/chromium' });
  const scopesOf = new Map<string, { org: string; scopes: Scope[] }>();
  const signedIn = new WeakMap<Page, string>();
  return {
    url: stack.api.url,
    stack,
    async key({ org = 'acme', scopes = ['*'], plan = 'pro' }) {
      await stack.api.organization(org, plan);
      const key = await stack.api.key({ org, scopes });
      scopesOf.set(key, { org, scopes });
      return key;
    },
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
      const page = await context.newPage();
      await page.route('**/*', async (route) => {
        const url = new URL(route.request().url());
        const key = signedIn.get(page);
        if (url.pathname.startsWith('/v1/'))
          return route.continue({ headers: { ...route.request().headers(), 'x-api-key': key ?? '' } });
        if (url.pathname === '/ui/session') {
          const who = key === undefined ? undefined : scopesOf.get(key);
          if (who === undefined)
            return route.fulfill({ status: 401, json: { error: { code: 'x', message: 'x' } } });
          return route.fulfill({
            json: {
              organization: who.org,
              scopes: who.scopes,
              expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
            },
          });
        }
        if (url.pathname.startsWith('/ui/assets/')) {
          const file = join(out, url.pathname.slice('/ui/'.length));
          return route.fulfill({
            body: await readFile(file),
            contentType: TYPES[extname(file)] ?? 'application/octet-stream',
          });
        }
        return route.fulfill({ body: await readFile(join(out, 'index.html')), contentType: 'text/html' });
      });
      return page;
    },
    async signIn(page, key) {
      signedIn.set(page, key);
      await Promise.resolve();
    },
    async screenshot(page, name) {
      if (process.env.AGENTRY_SCREENSHOTS === '1')
        await page.screenshot({ path: `docs/images/ui-${name}.png` });
    },
    async stop() {
      await browser.close();
      await stack.stop();
      await rm(out, { recursive: true, force: true });
    },
  };
}
